/**
 * The benchmark's tables and its verdict against the issue's bar.
 */
import { LABEL, type PathName } from './paths.js';

/** A path's row in a throughput case's table: its rounds' medians (see caseRow), with the range of RPS. */
export interface Row extends Round {
  path: PathName;
  rpsMin: number;
  rpsMax: number;
}

export interface HoldRow {
  path: PathName;
  streams: number;
  completed: number;
  errors: number;
  errorKinds: string[];
  peakOpen: number;
  idleRssMb: number;
  peakRssMb: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** The longest GC pause over the same window, its kind, and all GC pauses summed. */
  gcMaxMs: number;
  gcMaxKind: string;
  gcTotalMs: number;
  cpuUsPerStream: number;
  /** The gateway's socket writes and reads a stream, over the whole hold. */
  writesPerStream: number;
  readsPerStream: number;
  /** The gateway core over the lag window: steal and softirq %, and the most steal in one 100 ms sample. */
  stealPct: number;
  softirqPct: number;
  maxStealMs: number;
  p50Ms: number;
  p99Ms: number;
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};

/** One path's figures from one round of a throughput case (run.ts measures them). */
export interface Round {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerReq: number;
  rssMb: number;
  errors: number;
  errorKinds: string[];
  /** CPU used on the load core (mock + load generator), % of one core: near 100 means the load side was the limit. */
  loadCorePct: number;
  /** The gateway's write and read system calls a request (both sockets): how far its socket work was batched. */
  writesPerReq: number;
  readsPerReq: number;
  /** % of the gateway core's time taken by the hypervisor (steal) and by interrupt work (softirq) during the path's rounds. */
  stealPct: number;
  softirqPct: number;
}

/**
 * A path's row over its rounds: medians (a round that hit a slow phase of the
 * machine moves a median least), the range of RPS, the most RSS any round saw,
 * and every error of every round.
 */
export function caseRow(path: PathName, rs: Round[]): Row {
  return {
    path,
    rps: median(rs.map((x) => x.rps)),
    rpsMin: Math.min(...rs.map((x) => x.rps)),
    rpsMax: Math.max(...rs.map((x) => x.rps)),
    p50Ms: median(rs.map((x) => x.p50Ms)),
    p99Ms: median(rs.map((x) => x.p99Ms)),
    cpuUsPerReq: median(rs.map((x) => x.cpuUsPerReq)),
    rssMb: Math.max(...rs.map((x) => x.rssMb)),
    errors: rs.reduce((n, x) => n + x.errors, 0),
    errorKinds: [...new Set(rs.flatMap((x) => x.errorKinds))],
    loadCorePct: median(rs.map((x) => x.loadCorePct)),
    writesPerReq: median(rs.map((x) => x.writesPerReq)),
    readsPerReq: median(rs.map((x) => x.readsPerReq)),
    stealPct: median(rs.map((x) => x.stealPct)),
    softirqPct: median(rs.map((x) => x.softirqPct)),
  };
}

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '—');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '—');
const signed = (n: number) => (Number.isFinite(n) ? `${n >= 0 ? '+' : '−'}${Math.abs(n).toFixed(0)}` : '—');
const ratio = (a: number, b: number | undefined) => (b && Number.isFinite(a) && Number.isFinite(b) ? `${(a / b).toFixed(2)}×` : '—');

function table(head: string[], rows: string[][]): void {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${w.map((n, i) => (i === 0 ? '-'.repeat(n + 2) : `${'-'.repeat(n + 1)}:`)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

export function printCase(title: string, rows: Row[]): void {
  const bare = rows.find((r) => r.path === 'bare');
  const portkey = rows.find((r) => r.path === 'portkey');
  console.log(`\n### ${title}\n`);
  table(
    ['path', 'RPS median', 'RPS range', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS MB', 'RPS vs bare', 'RPS vs Portkey', 'CPU vs bare', 'p99 vs bare', 'errors'],
    rows.map((r) => [
      LABEL[r.path],
      f0(r.rps),
      `${f0(r.rpsMin)}–${f0(r.rpsMax)}`,
      f2(r.p50Ms),
      f2(r.p99Ms),
      f0(r.cpuUsPerReq),
      f0(r.rssMb),
      ratio(r.rps, bare?.rps),
      ratio(r.rps, portkey?.rps),
      ratio(r.cpuUsPerReq, bare?.cpuUsPerReq),
      ratio(r.p99Ms, bare?.p99Ms),
      r.errors ? `${r.errors} (${r.errorKinds.join('; ')})` : '0',
    ]),
  );
  const parsing = rows.find((r) => r.path === 'parsing');
  const sy = rows.find((r) => r.path === 'switchyard');
  if (parsing && sy && bare) {
    console.log(
      `\nCPU µs a request: parsing proxy − bare ${signed(parsing.cpuUsPerReq - bare.cpuUsPerReq)}, ` +
        `Switchyard − parsing proxy ${signed(sy.cpuUsPerReq - parsing.cpuUsPerReq)}`,
    );
  }
  const busy = rows.filter((r) => r.loadCorePct > 90);
  const loads = rows.map((r) => `${LABEL[r.path]} ${f0(r.loadCorePct)} %`).join(', ');
  console.log(`\nload core (mock + load generator) busy: ${loads}${busy.length ? ' — SATURATED: those paths may be capped by the load side' : ''}`);
  // A gateway with time to spare reads each event as it comes and writes it alone; a busy one
  // finds several per read. More calls cost kernel time on both cores, so CPU a request moves with them.
  const calls = rows.map((r) => `${LABEL[r.path]} ${f1(r.writesPerReq)} / ${f1(r.readsPerReq)}`).join(', ');
  console.log(`gateway socket writes / reads a request: ${calls}`);
  // Steal is time this VM did not run at all; softirq is loopback TCP's receive work, in no process's CPU figure.
  const core = rows.map((r) => `${LABEL[r.path]} ${f1(r.stealPct)} % / ${f1(r.softirqPct)} %`).join(', ');
  console.log(`gateway core steal / softirq: ${core}`);
}

export function printHold(title: string, rows: HoldRow[]): void {
  console.log(`\n### ${title}\n`);
  table(
    ['path', 'held at once', 'completed', 'RSS before MB', 'peak RSS holding MB', 'loop lag p50 ms', 'loop lag p99 ms', 'loop lag max ms', 'longest GC pause ms', 'GC total ms', 'CPU µs/stream', 'stream p50 s', 'stream p99 s', 'errors'],
    rows.map((r) => [
      LABEL[r.path],
      f0(r.peakOpen),
      f0(r.completed),
      f0(r.idleRssMb),
      f0(r.peakRssMb),
      f2(r.lagP50Ms),
      f2(r.lagP99Ms),
      f2(r.lagMaxMs),
      Number.isFinite(r.gcMaxMs) ? `${f2(r.gcMaxMs)}${r.gcMaxKind ? ` (${r.gcMaxKind})` : ''}` : '—',
      f0(r.gcTotalMs),
      f0(r.cpuUsPerStream),
      f2(r.p50Ms / 1000),
      f2(r.p99Ms / 1000),
      r.errors ? `${r.errors} (${r.errorKinds.join('; ')})` : '0',
    ]),
  );
  // A long loop pause that lines up with as much steal was the hypervisor's: the VM did not run.
  const core = rows.map((r) => `${LABEL[r.path]} ${f1(r.stealPct)} % / ${f1(r.softirqPct)} % (most steal in 100 ms: ${f0(r.maxStealMs)} ms)`).join(', ');
  console.log(`\ngateway core over the lag window, steal / softirq: ${core}`);
  const calls = rows.map((r) => `${LABEL[r.path]} ${f1(r.writesPerStream)} / ${f1(r.readsPerStream)}`).join(', ');
  console.log(`gateway socket writes / reads a stream: ${calls}`);
}

/** The cases the verdict reads: Switchyard's row of each is held against the others. */
export interface Verdict {
  buffered?: Row[];
  stream20?: Row[];
  hold?: HoldRow[];
}

/** The issue's bar, checked against this run: what each check says (with this run's figure) and whether it passed. */
export function verdictChecks(v: Verdict): [string, boolean][] {
  const checks: [string, boolean][] = [];
  for (const name of ['buffered', 'stream20'] as const) {
    const rows = v[name];
    const s = rows?.find((r) => r.path === 'switchyard');
    const b = rows?.find((r) => r.path === 'bare');
    const p = rows?.find((r) => r.path === 'portkey');
    if (!s) continue;
    if (b) {
      checks.push([`${name}: RPS ≥ 80 % of bare (${f2((s.rps / b.rps) * 100)} %)`, s.rps >= 0.8 * b.rps]);
      checks.push([`${name}: CPU/req ≤ 1.5× bare (${ratio(s.cpuUsPerReq, b.cpuUsPerReq)})`, s.cpuUsPerReq <= 1.5 * b.cpuUsPerReq]);
      checks.push([`${name}: p99 ≤ 1.5× bare (${ratio(s.p99Ms, b.p99Ms)})`, s.p99Ms <= 1.5 * b.p99Ms]);
    }
    if (p) checks.push([`${name}: RPS ≥ 10× Portkey (${ratio(s.rps, p.rps)})`, s.rps >= 10 * p.rps]);
    checks.push([`${name}: no errors (${s.errors})`, s.errors === 0]);
  }
  const h = v.hold?.find((r) => r.path === 'switchyard');
  if (h) {
    checks.push([`hold: ${h.streams} streams held at once (${h.peakOpen}), all completed (${h.completed})`, h.peakOpen >= h.streams && h.completed === h.streams]);
    checks.push([`hold: peak RSS < 200 MB (${f0(h.peakRssMb)} MB)`, h.peakRssMb < 200]);
    checks.push([`hold: event-loop lag p99 < 20 ms (${f2(h.lagP99Ms)} ms)`, h.lagP99Ms < 20]);
  }
  return checks;
}

/** The issue's bar, checked against this run. */
export function printVerdict(v: Verdict): void {
  const checks = verdictChecks(v);
  if (checks.length === 0) return;
  console.log('\n### Against the bar (Switchyard)\n');
  for (const [what, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${what}`);
}
