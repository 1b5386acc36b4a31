/**
 * The pure parts of `bench:count` (count.ts starts valgrind when imported):
 * its option check, the totals line of a callgrind dump, and its table.
 */
import { LABEL, type PathName } from './paths.js';
import { median } from './report.js';

/** A whole number of at least 1, or a clear refusal. */
export function count1(name: string, v: string | undefined): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number of at least 1, got '${v}'`);
  return n;
}

/**
 * The instructions of a callgrind dump, or undefined while it is still being
 * written: its totals line (ended by a newline) comes last, and instructions
 * are its first figure (more follow if valgrind simulated caches too).
 */
export function callgrindTotal(text: string): number | undefined {
  const m = /^totals: (\d+)[ \d]*\n/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** One path's instructions a request, window by window. */
export interface WindowCounts {
  path: PathName;
  perRequest: number[];
}

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

/**
 * Each path's lowest window (the steady state: a window that holds a major GC
 * or a re-optimisation reads higher), its median window, every window, and the
 * lowest against the bare proxy's and the baseline build's lowest.
 */
export function countTable(results: WindowCounts[]): string {
  const floor = results.find((r) => r.path === 'bare');
  const base = results.find((r) => r.path === 'baseline');
  const lines = ['\n| path | instructions / request (lowest window) | median window | windows | vs bare | vs baseline |', '| --- | ---: | ---: | --- | ---: | ---: |'];
  for (const r of results) {
    const low = Math.min(...r.perRequest);
    const vs = (other: WindowCounts | undefined) => (other ? `${(low / Math.min(...other.perRequest)).toFixed(3)}×` : '—');
    lines.push(`| ${LABEL[r.path]} | ${k(low)} | ${k(median(r.perRequest))} | ${r.perRequest.map(k).join(' ')} | ${vs(floor)} | ${vs(base)} |`);
  }
  return lines.join('\n');
}
