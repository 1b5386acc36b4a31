/** Report rows for tests: every figure set, so a test states only the ones it is about. */
import type { PathName } from '../../bench/paths.js';
import type { HoldRow, Round, Row } from '../../bench/report.js';

/** One round's figures. */
export function round(r: Partial<Round> = {}): Round {
  return {
    rps: 1000,
    p50Ms: 1,
    p99Ms: 2,
    cpuUsPerReq: 100,
    rssMb: 60,
    errors: 0,
    errorKinds: [],
    loadCorePct: 50,
    writesPerReq: 2,
    readsPerReq: 2,
    stealPct: 0,
    softirqPct: 0,
    ...r,
  };
}

export function row(path: PathName, r: Partial<Row> = {}): Row {
  return { ...round(), path, rpsMin: 900, rpsMax: 1100, ...r };
}

export function holdRow(path: PathName, r: Partial<HoldRow> = {}): HoldRow {
  return {
    path,
    streams: 2000,
    completed: 2000,
    errors: 0,
    errorKinds: [],
    peakOpen: 2000,
    idleRssMb: 50,
    peakRssMb: 100,
    lagP50Ms: 1,
    lagP99Ms: 5,
    lagMaxMs: 10,
    gcMaxMs: 3,
    gcMaxKind: 'scavenge',
    gcTotalMs: 40,
    cpuUsPerStream: 500,
    writesPerStream: 50,
    readsPerStream: 50,
    stealPct: 0,
    softirqPct: 0,
    maxStealMs: 0,
    p50Ms: 10_000,
    p99Ms: 10_500,
    ...r,
  };
}
