/**
 * What `npm run bench` prints for a case: medians over rounds (caseRow), the
 * table's ratios against bare and Portkey, the CPU steps between the floors
 * and Switchyard, and the load-core saturation warning.
 */
import { describe, expect, it, vi } from 'vitest';
import { caseRow, median, printCase, printHold } from '../../bench/report.js';
import { holdRow, round, row } from './rows.js';

/** Every line printCase/printHold logs. */
function printed(print: () => void): string[] {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    print();
    return log.mock.calls.flatMap((c) => String(c[0]).split('\n'));
  } finally {
    log.mockRestore();
  }
}

/** The cells of the table row that starts with `label`. */
function cells(lines: string[], label: string): string[] {
  const line = lines.find((l) => l.startsWith(`| ${label} `));
  if (line === undefined) throw new Error(`no row for ${label}`);
  return line.split('|').slice(1, -1).map((c) => c.trim());
}

describe('median', () => {
  it('is the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('sorts numerically, not as strings', () => {
    // As strings, [10, 9, 1] sorts to [1, 10, 9] and the middle would be 10.
    expect(median([10, 9, 1])).toBe(9);
  });

  it('is NaN for no values, and leaves its input as it was', () => {
    expect(median([])).toBeNaN();
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe('caseRow', () => {
  it('takes medians over the rounds, the RPS range, the most RSS, and every error', () => {
    const r = caseRow('switchyard', [
      round({ rps: 300, p99Ms: 5, cpuUsPerReq: 90, rssMb: 70, errors: 1, errorKinds: ['status 502'], stealPct: 4 }),
      round({ rps: 100, p99Ms: 1, cpuUsPerReq: 120, rssMb: 90, errors: 0, errorKinds: [], stealPct: 0 }),
      round({ rps: 200, p99Ms: 3, cpuUsPerReq: 100, rssMb: 80, errors: 2, errorKinds: ['socket ECONNRESET', 'status 502'], stealPct: 1 }),
    ]);
    expect(r).toMatchObject({
      path: 'switchyard',
      rps: 200,
      rpsMin: 100,
      rpsMax: 300,
      p99Ms: 3,
      cpuUsPerReq: 100,
      rssMb: 90,
      errors: 3,
      stealPct: 1,
    });
    // Each kind once, in the order first seen.
    expect(r.errorKinds).toEqual(['status 502', 'socket ECONNRESET']);
  });

  it('an even number of rounds takes the mean of the middle two', () => {
    const r = caseRow('bare', [round({ rps: 100, loadCorePct: 40 }), round({ rps: 400, loadCorePct: 90 }), round({ rps: 200, loadCorePct: 60 }), round({ rps: 300, loadCorePct: 70 })]);
    expect(r.rps).toBe(250);
    expect(r.loadCorePct).toBe(65);
  });
});

describe('printCase', () => {
  const rows = [
    row('bare', { rps: 1000, cpuUsPerReq: 100, p99Ms: 2 }),
    row('parsing', { rps: 950, cpuUsPerReq: 130, p99Ms: 2.2 }),
    row('switchyard', { rps: 900, rpsMin: 850.4, rpsMax: 1234.5, cpuUsPerReq: 120, p99Ms: 2.5, errors: 3, errorKinds: ['status 500', 'socket ECONNRESET'] }),
    row('portkey', { rps: 50, cpuUsPerReq: 2000, p99Ms: 400 }),
  ];

  it('shows each path against bare and Portkey', () => {
    const lines = printed(() => printCase('Small buffered chat', rows));
    expect(lines).toContain('### Small buffered chat');
    // path, RPS median, range, p50, p99, CPU, RSS, vs bare, vs Portkey, CPU vs bare, p99 vs bare, errors
    expect(cells(lines, 'Switchyard')).toEqual(['Switchyard', '900', '850–1,235', '1.00', '2.50', '120', '60', '0.90×', '18.00×', '1.20×', '1.25×', '3 (status 500; socket ECONNRESET)']);
    expect(cells(lines, 'bare undici proxy').slice(7)).toEqual(['1.00×', '20.00×', '1.00×', '1.00×', '0']);
    expect(cells(lines, 'Portkey 1.15.2').slice(7, 11)).toEqual(['0.05×', '1.00×', '20.00×', '200.00×']);
  });

  it('lines the table up: every line as wide, numbers right-aligned', () => {
    const table = printed(() => printCase('t', rows)).filter((l) => l.startsWith('|'));
    expect(table).toHaveLength(2 + rows.length);
    expect(new Set(table.map((l) => l.length)).size).toBe(1);
    // The path column left-aligned, every other right-aligned (markdown `---:`).
    const rule = table[1]!.split('|').slice(1, -1);
    expect(rule[0]).toMatch(/^-+$/);
    for (const c of rule.slice(1)) expect(c).toMatch(/^-+:$/);
  });

  it('prints — for a ratio without its reference row or a figure that is missing', () => {
    const lines = printed(() => printCase('t', [row('switchyard', { p99Ms: NaN })]));
    const c = cells(lines, 'Switchyard');
    expect(c[4]).toBe('—');
    expect(c.slice(7, 11)).toEqual(['—', '—', '—', '—']);
  });

  it('gives the CPU a request the parsing step and Switchyard add, with the sign', () => {
    const lines = printed(() => printCase('t', rows));
    // Parsing costs 30 µs over bare; Switchyard 10 µs less than parsing.
    expect(lines).toContain('CPU µs a request: parsing proxy − bare +30, Switchyard − parsing proxy −10');
  });

  it('warns when the load core was over 90 % busy, and only then', () => {
    const calm = printed(() => printCase('t', [row('bare', { loadCorePct: 90 }), row('switchyard', { loadCorePct: 45.6 })]));
    const line = calm.find((l) => l.startsWith('load core'))!;
    expect(line).toBe('load core (mock + load generator) busy: bare undici proxy 90 %, Switchyard 46 %');
    const busy = printed(() => printCase('t', [row('bare', { loadCorePct: 90.5 }), row('switchyard')]));
    expect(busy.find((l) => l.startsWith('load core'))).toContain('SATURATED');
  });

  it('reports socket calls and steal/softirq a path', () => {
    const lines = printed(() => printCase('t', [row('switchyard', { writesPerReq: 2.04, readsPerReq: 3, stealPct: 1.25, softirqPct: 12 })]));
    expect(lines).toContain('gateway socket writes / reads a request: Switchyard 2.0 / 3.0');
    expect(lines).toContain('gateway core steal / softirq: Switchyard 1.3 % / 12.0 %');
  });
});

describe('printHold', () => {
  it('shows stream durations in seconds and the longest GC pause with its kind', () => {
    const lines = printed(() =>
      printHold('2000 slow streams', [
        holdRow('switchyard', { peakOpen: 2000, completed: 1998, errors: 2, errorKinds: ['stream ended without [DONE]'], p50Ms: 10_240, p99Ms: 10_980, gcMaxMs: 3.5, gcMaxKind: 'mark-compact' }),
        holdRow('bare', { gcMaxMs: 1.25, gcMaxKind: '' }),
        holdRow('portkey', { gcMaxMs: NaN }),
      ]),
    );
    const s = cells(lines, 'Switchyard');
    expect(s.slice(1, 3)).toEqual(['2,000', '1,998']);
    expect(s[8]).toBe('3.50 (mark-compact)');
    expect(s.slice(11)).toEqual(['10.24', '10.98', '2 (stream ended without [DONE])']);
    expect(cells(lines, 'bare undici proxy')[8]).toBe('1.25');
    expect(cells(lines, 'Portkey 1.15.2')[8]).toBe('—');
  });

  it('reports steal over the lag window, with the most stolen in one sample', () => {
    const lines = printed(() => printHold('t', [holdRow('switchyard', { stealPct: 3, softirqPct: 7.04, maxStealMs: 120 })]));
    expect(lines).toContain('gateway core over the lag window, steal / softirq: Switchyard 3.0 % / 7.0 % (most steal in 100 ms: 120 ms)');
  });
});
