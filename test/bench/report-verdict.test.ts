/**
 * The verdict against the bar: RPS ≥ 80 % of bare, ≥ 10× Portkey,
 * CPU and p99 within 1.5× of bare, no errors; the hold at 2,000 streams under
 * 200 MB with a lag p99 under 20 ms. Each bar is checked at its edge and just
 * past it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { printVerdict, verdictChecks, type HoldRow, type Row } from '../../bench/report.js';
import { holdRow, row } from './rows.js';

/** Bare 1,000 RPS at 100 µs and 2 ms p99; Portkey 80 RPS; Switchyard exactly on every bar. */
const onTheBar = (s: Partial<Row> = {}, p: Partial<Row> = {}): Row[] => [
  row('bare', { rps: 1000, cpuUsPerReq: 100, p99Ms: 2 }),
  row('switchyard', { rps: 800, cpuUsPerReq: 150, p99Ms: 3, ...s }),
  row('portkey', { rps: 80, ...p }),
];

const verdicts = (checks: [string, boolean][]) => Object.fromEntries(checks);

describe('verdictChecks: throughput cases', () => {
  it('passes every bar when Switchyard sits exactly on it, and says the figure', () => {
    const checks = verdictChecks({ buffered: onTheBar() });
    expect(checks).toEqual([
      ['buffered: RPS ≥ 80 % of bare (80.00 %)', true],
      ['buffered: CPU/req ≤ 1.5× bare (1.50×)', true],
      ['buffered: p99 ≤ 1.5× bare (1.50×)', true],
      ['buffered: RPS ≥ 10× Portkey (10.00×)', true],
      ['buffered: no errors (0)', true],
    ]);
  });

  it('fails each bar just past it', () => {
    expect(verdictChecks({ stream20: onTheBar({ rps: 799 }) })[0]).toEqual(['stream20: RPS ≥ 80 % of bare (79.90 %)', false]);
    expect(verdictChecks({ stream20: onTheBar({ cpuUsPerReq: 151 }) })[1]).toEqual(['stream20: CPU/req ≤ 1.5× bare (1.51×)', false]);
    expect(verdictChecks({ stream20: onTheBar({ p99Ms: 3.02 }) })[2]).toEqual(['stream20: p99 ≤ 1.5× bare (1.51×)', false]);
    // 800 RPS against Portkey's 80.1: 9.99×.
    expect(verdictChecks({ stream20: onTheBar({}, { rps: 80.1 }) })[3]).toEqual(['stream20: RPS ≥ 10× Portkey (9.99×)', false]);
    expect(verdictChecks({ stream20: onTheBar({ errors: 2 }) })[4]).toEqual(['stream20: no errors (2)', false]);
  });

  it('a missing figure (NaN) fails its check rather than passing', () => {
    const v = verdicts(verdictChecks({ buffered: onTheBar({ rps: NaN, cpuUsPerReq: NaN, p99Ms: NaN }) }));
    expect(Object.entries(v).filter(([, ok]) => !ok)).toHaveLength(4);
  });

  it('checks against bare only with a bare row, against Portkey only with a Portkey row', () => {
    const noBare = verdictChecks({ buffered: [row('switchyard', { rps: 800 }), row('portkey', { rps: 80 })] });
    expect(noBare.map(([what]) => what)).toEqual(['buffered: RPS ≥ 10× Portkey (10.00×)', 'buffered: no errors (0)']);
    const noPortkey = verdictChecks({ buffered: onTheBar().filter((r) => r.path !== 'portkey') });
    expect(noPortkey.some(([what]) => what.includes('Portkey'))).toBe(false);
    expect(noPortkey).toHaveLength(4);
  });

  it('judges only Switchyard: the baseline build, however slow, is not checked', () => {
    expect(verdictChecks({ buffered: [row('bare', { rps: 1000 }), row('baseline', { rps: 1 })] })).toEqual([]);
  });

  it('checks both counted cases, buffered first', () => {
    const names = verdictChecks({ stream20: onTheBar(), buffered: onTheBar() }).map(([what]) => what.split(':')[0]);
    expect(names).toEqual([...Array(5).fill('buffered'), ...Array(5).fill('stream20')]);
  });
});

describe('verdictChecks: the hold', () => {
  const ok: Partial<HoldRow> = { streams: 2000, peakOpen: 2000, completed: 2000, peakRssMb: 150, lagP99Ms: 19.99 };
  const hold = (h: Partial<HoldRow>) => verdictChecks({ hold: [holdRow('bare', { peakRssMb: 999 }), holdRow('switchyard', { ...ok, ...h })] });

  it('passes with every stream held and completed, RSS and lag under their bars', () => {
    expect(hold({})).toEqual([
      ['hold: 2000 streams held at once (2000), all completed (2000)', true],
      ['hold: peak RSS < 200 MB (150 MB)', true],
      ['hold: event-loop lag p99 < 20 ms (19.99 ms)', true],
    ]);
  });

  it('the RSS and lag bars are strict: just under passes, 200 MB and 20 ms fail', () => {
    expect(hold({ peakRssMb: 199.9 })[1]![1]).toBe(true);
    expect(hold({ peakRssMb: 200 })[1]![1]).toBe(false);
    expect(hold({ lagP99Ms: 20 })[2]![1]).toBe(false);
  });

  it('fails when fewer streams were open at once or some never completed', () => {
    expect(hold({ peakOpen: 1999 })[0]![1]).toBe(false);
    expect(hold({ completed: 1999 })[0]![1]).toBe(false);
    // More completions than streams cannot be right either.
    expect(hold({ completed: 2001 })[0]![1]).toBe(false);
  });

  it('a lost RSS or lag reading fails', () => {
    expect(hold({ peakRssMb: NaN })[1]![1]).toBe(false);
    expect(hold({ lagP99Ms: NaN })[2]![1]).toBe(false);
  });
});

describe('printVerdict', () => {
  afterEach(() => vi.restoreAllMocks());

  it('prints nothing when no case has a Switchyard row', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    printVerdict({ buffered: [row('bare')] });
    expect(log).not.toHaveBeenCalled();
  });

  it('prints a heading, then PASS or FAIL before each check', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    printVerdict({ buffered: onTheBar({ errors: 1 }) });
    const lines = log.mock.calls.map((c) => String(c[0]));
    expect(lines[0]).toContain('### Against the bar (Switchyard)');
    expect(lines.slice(1)).toEqual([
      'PASS  buffered: RPS ≥ 80 % of bare (80.00 %)',
      'PASS  buffered: CPU/req ≤ 1.5× bare (1.50×)',
      'PASS  buffered: p99 ≤ 1.5× bare (1.50×)',
      'PASS  buffered: RPS ≥ 10× Portkey (10.00×)',
      'FAIL  buffered: no errors (1)',
    ]);
  });
});
