/**
 * `bench:count`'s own arithmetic: its option check, the instructions read
 * from a callgrind dump, and its summary table (lowest window, median window,
 * and the lowest against bare and the baseline build).
 */
import { describe, expect, it } from 'vitest';
import { callgrindTotal, count1, countTable } from '../../bench/count-report.js';

describe('count1', () => {
  it('takes a whole number of at least 1', () => {
    expect(count1('window', '1500')).toBe(1500);
    expect(count1('windows', '1')).toBe(1);
  });

  it.each(['0', '-3', '1.5', 'many', '', undefined])('refuses %j, naming the option', (v) => {
    expect(() => count1('warmup', v)).toThrow(`--warmup must be a whole number of at least 1, got '${v}'`);
  });
});

describe('callgrindTotal', () => {
  // The shape callgrind 3.19 writes with --compress-strings=no: a summary in the head, totals last.
  const dump = ['# callgrind format', 'version: 1', 'creator: callgrind-3.19.0', 'pid: 4242', 'cmd: node', 'part: 2', '', 'positions: line', 'events: Ir', 'summary: 7777', '', 'fl=???', 'fn=main', '0 12', '', 'totals: 128719', ''].join('\n');

  it('reads the totals line, not the summary', () => {
    expect(callgrindTotal(dump)).toBe(128719);
  });

  it('is undefined while the file is still being written (totals not yet ended by a newline, or not there)', () => {
    expect(callgrindTotal(dump.slice(0, -1))).toBeUndefined();
    expect(callgrindTotal(dump.slice(0, dump.indexOf('totals:')))).toBeUndefined();
  });

  it('takes instructions, the first figure, when valgrind also simulated caches', () => {
    expect(callgrindTotal('events: Ir Dr Dw\ntotals: 5000 1200 800\n')).toBe(5000);
  });
});

describe('countTable', () => {
  const lines = countTable([
    { path: 'bare', perRequest: [1000, 900, 1100] },
    { path: 'switchyard', perRequest: [3100, 2700, 2900] },
    { path: 'baseline', perRequest: [2800, 2750] },
  ]).split('\n');
  const cells = (label: string) =>
    lines
      .find((l) => l.startsWith(`| ${label} |`))!
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());

  it("gives each path's lowest window, its median window and every window, in thousands", () => {
    expect(cells('Switchyard').slice(0, 4)).toEqual(['Switchyard', '2.7k', '2.9k', '3.1k 2.7k 2.9k']);
    expect(cells('Switchyard (baseline build)').slice(1, 3)).toEqual(['2.8k', '2.8k']);
  });

  it('compares lowest windows: against bare and against the baseline build', () => {
    // 2,700 / 900 and 2,700 / 2,750
    expect(cells('Switchyard').slice(4)).toEqual(['3.000×', '0.982×']);
    // 900 / 900 and 900 / 2,750
    expect(cells('bare undici proxy').slice(4)).toEqual(['1.000×', '0.327×']);
  });

  it('prints — without a bare or baseline path to compare with', () => {
    const t = countTable([{ path: 'switchyard', perRequest: [2000] }]);
    expect(t).toContain('| Switchyard | 2.0k | 2.0k | 2.0k | — | — |');
  });
});
