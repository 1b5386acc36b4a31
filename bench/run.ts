/**
 * `npm run bench`: Switchyard (every routing feature on) against the floor (a
 * bare undici pass-through proxy), a second floor (the same proxy also parsing
 * the body and buffering the answer, as any gateway that routes on the model
 * must: bench/parsing-proxy.mjs) and a peer (the Portkey gateway from npm), in
 * one run, on this machine.
 *
 * Layout: the mock upstream and the load generator share core 0; the gateway
 * under load runs on core 1 (`taskset`). Each case loads every path the same
 * way, interleaved round by round (A B C A B C…), so drift in the machine hits
 * every path alike, and a round starts only once every gateway is idle (one
 * that fell behind keeps working after its load stops, on the same core);
 * figures are medians over the rounds. CPU per request is the
 * gateway process's utime+stime (/proc) over the requests it completed.
 *
 *   npm run bench                       # full: ~9 minutes
 *   npm run bench -- --quick            # short rounds, a smoke test of the numbers
 *   npm run bench -- --only buffered,stream20 --paths bare,switchyard --rounds 3
 *   npm run bench -- --cpu-prof DIR     # each path writes its .cpuprofile into DIR/<path>/
 *   npm run bench -- --node-flags=--trace-gc  # extra node flags for every gateway (output in the run's logs)
 *   npm run bench -- --json FILE        # also write every round as JSON
 *   npm run bench -- --config FILE      # Switchyard with another config (same env vars)
 *   npm run bench -- --baseline DIR     # also run the build in DIR (a built checkout), interleaved: before/after
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { LoadResult, LoadSpec } from './loadgen.js';
import type { MockMode } from './mock-upstream.js';
import { allowedCpus, cpuJiffies, cpuShares, cpuUs, ioCalls, rssMb, rssPeak, stealWatch } from './proc.js';
import { freePort, httpRequest, LABEL, PATHS, startGateway, type Gateway, type PathName } from './paths.js';
import { chatBody, type CaseName } from './bodies.js';
import { caseRow, printCase, printHold, printVerdict, type HoldRow, type Row, type Verdict } from './report.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    paths: { type: 'string' },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    streams: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'node-flags': { type: 'string' },
    json: { type: 'string' },
    config: { type: 'string' },
    baseline: { type: 'string' },
  },
});

const quick = args.quick!;
const ROUNDS = Number(args.rounds ?? (quick ? 2 : 5));
const SECONDS = Number(args.seconds ?? (quick ? 2 : 4));
const WARMUP_S = quick ? 1 : 2;
const HOLD_STREAMS = Number(args.streams ?? 2000);

interface ThroughputCase {
  name: CaseName;
  title: string;
  connections: number;
  mode: MockMode;
  stream: boolean;
}

const THROUGHPUT: ThroughputCase[] = [
  { name: 'buffered', title: 'Small buffered chat, 50 connections', connections: 50, mode: { kind: 'fast', chunks: 20 }, stream: false },
  { name: 'stream20', title: 'Streaming, 20 chunks, 50 connections', connections: 50, mode: { kind: 'fast', chunks: 20 }, stream: true },
  { name: 'stream200', title: 'Streaming, 200 chunks, 50 connections', connections: 50, mode: { kind: 'fast', chunks: 200 }, stream: true },
  { name: 'body100k', title: '100 KB request body (large prompt), buffered, 50 connections', connections: 50, mode: { kind: 'fast', chunks: 20 }, stream: false },
];
const ORDER: CaseName[] = ['buffered', 'stream20', 'stream200', 'hold', 'body100k'];
const HOLD = {
  name: 'hold' as const,
  title: `${HOLD_STREAMS} concurrent slow streams (one event every 200 ms)`,
  mode: { kind: 'slow', chunks: quick ? 30 : 50, intervalMs: 200 } as MockMode,
};

const only = args.only ? new Set(args.only.split(',')) : null;
const paths: PathName[] = args.paths ? (args.paths.split(',') as PathName[]) : [...PATHS];
if (args.baseline && !paths.includes('baseline')) paths.splice(paths.indexOf('switchyard') + 1, 0, 'baseline');

/** A TS child (mock, load generator) on the load core, answering over IPC. */
function child(file: string, cpu: string | null): ChildProcess {
  const tsx = ['--import', 'tsx'];
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  if (cpu === null) return fork(join(ROOT, file), [], { execArgv: tsx, stdio });
  // fork() runs `execPath ...execArgv file`: make that `taskset -c CPU node --import tsx file`.
  return fork(join(ROOT, file), [], { execPath: 'taskset', execArgv: ['-c', cpu, process.execPath, ...tsx], stdio });
}

function nextMessage<T>(proc: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type?: string }) => {
      if (m?.type !== type) return;
      proc.off('message', on);
      resolve(m as T);
    };
    proc.on('message', on);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until no gateway is still busy (at most `maxMs`): a path that fell
 * behind (Portkey's p99 runs to seconds) keeps working after its round's load
 * stops, on the core the next path is measured on. Quiet means under one /proc
 * tick (10 ms of CPU) per 200 ms window, summed over every gateway.
 */
async function settle(pids: number[], maxMs = 5000): Promise<void> {
  const total = () => pids.reduce((n, pid) => n + cpuUs(pid), 0);
  const until = Date.now() + maxMs;
  let before = total();
  do {
    await sleep(200);
    const now = total();
    if (now - before <= 10_000) return;
    before = now;
  } while (Date.now() < until);
}

async function main(): Promise<void> {
  const ncpu = availableParallelism();
  const pinned = ncpu >= 2;
  const loadCpu = pinned ? '0' : null;
  const gwCpu = pinned ? '1' : null;
  const logDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const started = new Date();
  console.log(`Switchyard benchmark — ${started.toISOString()}`);
  console.log(`machine: ${cpus()[0]?.model ?? '?'}, ${ncpu} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}, ${process.platform} ${process.arch}`);
  console.log(
    pinned
      ? 'pinning: mock upstream + load generator on CPU 0, the gateway under load on CPU 1'
      : 'pinning: OFF (fewer than 2 CPUs): figures are not comparable with pinned runs',
  );
  console.log(`rounds: ${ROUNDS} × ${SECONDS} s per path per case (after a ${WARMUP_S} s warm-up), interleaved; logs in ${logDir}`);

  const mock = child('bench/mock-upstream.ts', loadCpu);
  const { port: mockPort } = await nextMessage<{ port: number }>(mock, 'ready');
  const load = child('bench/loadgen.ts', loadCpu);
  await nextMessage(load, 'ready');

  const profDir = args['cpu-prof'] ? resolve(args['cpu-prof']) : undefined;
  const extraFlags = args['node-flags']?.split(/\s+/).filter(Boolean) ?? [];
  if (profDir) mkdirSync(profDir, { recursive: true });
  const gateways = new Map<PathName, Gateway>();
  for (const name of paths) {
    // Every path is profiled (each into its own folder), so the floor's costs can be compared frame by frame.
    const nodeFlags = [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, name)}`] : []), ...extraFlags];
    const g = await startGateway(name, { root: ROOT, mockPort, port: await freePort(), cpu: gwCpu, logDir, nodeFlags, config: args.config ? resolve(args.config) : undefined, baselineRoot: args.baseline ? resolve(args.baseline) : undefined });
    gateways.set(name, g);
    console.log(`  ${LABEL[name].padEnd(18)} pid ${g.pid} on CPU ${allowedCpus(g.pid)}, port ${g.port}, idle RSS ${rssMb(g.pid).toFixed(0)} MB`);
  }
  console.log(`  mock pid ${mock.pid} on CPU ${allowedCpus(mock.pid!)}, load generator pid ${load.pid} on CPU ${allowedCpus(load.pid!)}`);

  const setMode = async (mode: MockMode) => {
    const ack = nextMessage(mock, 'mode-set');
    mock.send({ type: 'mode', mode });
    await ack;
  };
  const runLoad = async (spec: LoadSpec, onAllOpen?: () => void): Promise<LoadResult> => {
    const done = nextMessage<{ result: LoadResult }>(load, 'result');
    let offOpen: (() => void) | undefined;
    if (onAllOpen) {
      const on = (m: { type?: string }) => m?.type === 'all-open' && onAllOpen();
      load.on('message', on);
      offOpen = () => load.off('message', on);
    }
    load.send({ type: 'run', spec });
    const { result } = await done;
    offOpen?.();
    return result;
  };

  const all: Record<string, unknown> = { started: started.toISOString(), rounds: ROUNDS, seconds: SECONDS, cases: {} };
  const verdict: Verdict = {};

  async function throughput(c: ThroughputCase): Promise<void> {
    await setMode(c.mode);
    const spec = (g: Gateway, seconds: number): LoadSpec => ({
      port: g.port,
      request: httpRequest(g, g.port, chatBody(c.name, g.model)),
      connections: c.connections,
      durationMs: seconds * 1000,
      stream: c.stream,
    });
    for (const g of gateways.values()) await runLoad(spec(g, WARMUP_S));
    const gwPids = [...gateways.values()].map((g) => g.pid);
    const rounds = new Map<PathName, (LoadResult & { cpuUsPerReq: number; rssMb: number; loadCorePct: number; writesPerReq: number; readsPerReq: number; stealPct: number; softirqPct: number })[]>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const g of gateways.values()) {
        await settle(gwPids);
        const cpu0 = cpuUs(g.pid);
        const io0 = ioCalls(g.pid);
        const load0 = cpuUs(mock.pid!) + cpuUs(load.pid!);
        const core0 = cpuJiffies(gwCpu);
        const res = await runLoad(spec(g, SECONDS));
        const cpu1 = cpuUs(g.pid);
        const io1 = ioCalls(g.pid);
        const load1 = cpuUs(mock.pid!) + cpuUs(load.pid!);
        const row = {
          ...res,
          ...cpuShares(core0, cpuJiffies(gwCpu)),
          cpuUsPerReq: res.completed > 0 ? (cpu1 - cpu0) / res.completed : NaN,
          writesPerReq: res.completed > 0 ? (io1.writes - io0.writes) / res.completed : NaN,
          readsPerReq: res.completed > 0 ? (io1.reads - io0.reads) / res.completed : NaN,
          rssMb: rssMb(g.pid),
          loadCorePct: ((load1 - load0) / (res.elapsedMs * 1000)) * 100,
        };
        if (!rounds.has(g.name)) rounds.set(g.name, []);
        rounds.get(g.name)!.push(row);
      }
    }
    const rows: Row[] = [...rounds].map(([name, rs]) => caseRow(name, rs));
    printCase(c.title, rows);
    (all.cases as Record<string, unknown>)[c.name] = Object.fromEntries(rounds);
    if (c.name === 'buffered' || c.name === 'stream20') verdict[c.name] = rows;
  }

  /** Socket writes and reads a stream over the hold (each event comes alone: a read and a write an event is the floor). */
  const perStream = (a: { reads: number; writes: number }, b: { reads: number; writes: number }, n: number) =>
    n > 0 ? { writesPerStream: (b.writes - a.writes) / n, readsPerStream: (b.reads - a.reads) / n } : { writesPerStream: NaN, readsPerStream: NaN };

  async function hold(): Promise<void> {
    await setMode(HOLD.mode);
    const holdRows: HoldRow[] = [];
    for (const g of gateways.values()) {
      await settle([...gateways.values()].map((x) => x.pid));
      const idle = rssMb(g.pid);
      const cpu0 = cpuUs(g.pid);
      const io0 = ioCalls(g.pid);
      let peak: { stop(): number } | undefined;
      let steal: ReturnType<typeof stealWatch> | undefined;
      let lagStarted: Promise<void> | undefined;
      const res = await runLoad(
        {
          port: g.port,
          request: httpRequest(g, g.port, chatBody('hold', g.model)),
          connections: HOLD_STREAMS,
          durationMs: 0,
          rampMs: 2000,
          stream: true,
          graceMs: 60_000,
        },
        () => {
          // Every stream is open: from here the gateway holds them all.
          peak = rssPeak(g.pid);
          steal = stealWatch(gwCpu);
          lagStarted = g.lagStart();
        },
      );
      await lagStarted;
      const lag = lagStarted ? await g.lag() : { p50Ms: NaN, p99Ms: NaN, maxMs: NaN, gcMaxMs: NaN, gcMaxKind: '', gcTotalMs: NaN };
      const core = steal?.stop() ?? { stealPct: NaN, softirqPct: NaN, maxStealMs: NaN };
      const row: HoldRow = {
        path: g.name,
        streams: HOLD_STREAMS,
        completed: res.completed,
        errors: res.errors,
        errorKinds: res.errorKinds,
        peakOpen: res.peakOpen,
        idleRssMb: idle,
        peakRssMb: peak ? peak.stop() : rssMb(g.pid),
        lagP50Ms: lag.p50Ms,
        lagP99Ms: lag.p99Ms,
        lagMaxMs: lag.maxMs,
        gcMaxMs: lag.gcMaxMs,
        gcMaxKind: lag.gcMaxKind,
        gcTotalMs: lag.gcTotalMs,
        cpuUsPerStream: res.completed > 0 ? (cpuUs(g.pid) - cpu0) / res.completed : NaN,
        ...perStream(io0, ioCalls(g.pid), res.completed),
        ...core,
        p50Ms: res.p50Ms,
        p99Ms: res.p99Ms,
      };
      holdRows.push(row);
    }
    printHold(HOLD.title, holdRows);
    (all.cases as Record<string, unknown>).hold = holdRows;
    verdict.hold = holdRows;
  }

  // The order: buffered, streams, the many-streams hold, then large bodies.
  for (const name of ORDER) {
    if (only && !only.has(name)) continue;
    if (name === 'hold') await hold();
    else await throughput(THROUGHPUT.find((c) => c.name === name)!);
  }

  printVerdict(verdict);
  if (args.json) writeFileSync(resolve(args.json), JSON.stringify(all, null, 2));

  for (const g of gateways.values()) await g.stop();
  mock.kill();
  load.kill();
  if (profDir) console.log(`\nCPU profile(s) of Switchyard in ${profDir}: summarise with \`npx tsx bench/profile-summary.ts ${profDir}/*.cpuprofile\``);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
