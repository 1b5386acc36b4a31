/**
 * How fast the V8 heap may grow before the next full collection. By default
 * V8 lets a small heap grow up to 4× its live size between major GCs; a
 * gateway holding thousands of streams promotes a steady trickle of
 * short-lived objects (each stream's wait between two events outlives a
 * young-generation cycle), so its RSS then peaks far above what it uses.
 * `SWITCHYARD_HEAP_GROWING_PERCENT` sets V8's `--heap-growing-percent`
 * (0 or unset: V8's own policy); a `--heap-growing-percent` given to node
 * itself wins. Trade-off measured in BENCHMARKS.md: less peak RSS, more
 * full collections.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = /^--heap[-_]growing[-_]percent(?:=|$)/;

/** The V8 flag to set, or undefined (V8's default, or node was given its own). */
export function heapGrowingFlag(execArgv: readonly string[], percent: string | undefined): string | undefined {
  if (execArgv.some((a) => FLAG.test(a))) return undefined;
  const n = percent === undefined || percent.trim() === '' ? 0 : Number(percent);
  if (!Number.isInteger(n) || n <= 0 || n > 1000) return undefined;
  return `--heap-growing-percent=${n}`;
}

export function tuneHeap(): void {
  const flag = heapGrowingFlag(process.execArgv, process.env.SWITCHYARD_HEAP_GROWING_PERCENT);
  if (flag) setFlagsFromString(flag);
}
