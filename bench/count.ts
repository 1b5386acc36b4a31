/**
 * `npm run bench:count`: instructions a buffered chat request (or, with
 * `--case stream20`, a 20-chunk stream; `--case body100k`, a request with a
 * 100 KB prompt) costs each gateway, counted by
 * valgrind (callgrind) rather than timed. This machine's
 * speed changes by the hour and a timed A/B cannot resolve differences under
 * ~3 µs (5 %); a count of the gateway process's own user-space instructions,
 * taken in a steady state, repeats to within ~1 % and needs no quiet machine.
 * It does not see kernel time (socket writes) or cache misses, so it ranks
 * changes to the gateway's own work; `npm run bench` stays the measure of
 * throughput.
 *
 * How: each gateway runs under `valgrind --tool=callgrind` with V8's
 * `--predictable` (no concurrent compiler or GC threads, so the JIT settles the
 * same way every run), gets `--warmup` requests, then `--windows` windows of
 * `--window` requests each; `callgrind_control --dump` closes each window.
 * The figure is the lowest window (a window that holds a major GC or a
 * re-optimisation reads higher; the lowest is the steady state), the median
 * beside it. Two gateways run at a time; counts do not depend on timing.
 *
 *   npm run bench:count                                # bare, parsing, switchyard: 3–8 minutes
 *   npm run bench:count -- --baseline DIR              # and a built checkout in DIR: before/after
 *   npm run bench:count -- --paths switchyard,baseline --baseline DIR --config FILE
 *   npm run bench:count -- --case stream20 --warmup 3000 --window 500
 *   npm run bench:count -- --paths bare,switchyard --functions 40   # and where they went, by function
 *   npm run bench:count -- --paths switchyard,baseline --baseline DIR --functions 30 --charge-to-js
 *
 * `--functions N` (count-functions.ts) lists, for the first path, the N
 * functions (JavaScript, V8 builtins and runtime, node's C++, libc) with the
 * most instructions a request in its lowest window, and for each other path
 * the N largest differences from the first. It runs the gateways with
 * `--perf-basic-prof` (V8's map of its compiled code, read after they stop).
 * With `--charge-to-js` the work of V8's builtins and runtime, node's C++ and
 * libc is charged to the JavaScript that called it: where the plain table says
 * `Builtins_KeyedLoadIC_Megamorphic`, this one says whose property reads those were.
 *
 * Needs valgrind (Debian: `apt-get install valgrind`).
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { Pool } from 'undici';
import { chatBody, type CaseName } from './bodies.js';
import { startMock } from './mock-upstream.js';
import { freePort, LABEL, startGateway, type Gateway, type PathName } from './paths.js';
import { byFunction, functionTable, type ByFunction } from './count-functions.js';
import { callgrindTotal, count1, countTable } from './count-report.js';

const { values: args } = parseArgs({
  options: {
    paths: { type: 'string' },
    baseline: { type: 'string' },
    config: { type: 'string' },
    warmup: { type: 'string', default: '6000' },
    window: { type: 'string', default: '1500' },
    windows: { type: 'string', default: '4' },
    connections: { type: 'string', default: '8' },
    case: { type: 'string', default: 'buffered' },
    functions: { type: 'string' },
    'charge-to-js': { type: 'boolean', default: false },
  },
});
const execFileAsync = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WARMUP = count1('warmup', args.warmup);
const WINDOW = count1('window', args.window);
const WINDOWS = count1('windows', args.windows);
const CONNECTIONS = count1('connections', args.connections);
const FUNCTIONS = args.functions === undefined ? 0 : count1('functions', args.functions);
const CASE = args.case as CaseName;
const CASE_LABEL: Partial<Record<CaseName, string>> = { buffered: 'buffered chat', stream20: '20-chunk streams', body100k: 'buffered chat with a 100 KB prompt' };
if (CASE_LABEL[CASE] === undefined) throw new Error(`--case: '${args.case}' cannot be counted (${Object.keys(CASE_LABEL).join(', ')})`);
const paths = (args.paths?.split(',') ?? ['bare', 'parsing', 'switchyard', ...(args.baseline ? ['baseline'] : [])]) as PathName[];
for (const p of paths) {
  if (!['bare', 'parsing', 'switchyard', 'baseline'].includes(p)) throw new Error(`--paths: '${p}' cannot be counted (bare, parsing, switchyard, baseline)`);
}
if (paths.includes('baseline') && !args.baseline) throw new Error('--paths baseline needs --baseline DIR');
if (args['charge-to-js'] && FUNCTIONS === 0) throw new Error('--charge-to-js needs --functions N');
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('bench:count needs valgrind on the PATH (Debian: apt-get install valgrind)');
  process.exit(2);
}

interface Count {
  path: PathName;
  perRequest: number[];
  /** With --functions: the lowest window's instructions by function. */
  functions?: ByFunction;
}

async function count(name: PathName, mockPort: number, logDir: string): Promise<Count> {
  const out = join(logDir, `${name}.callgrind`);
  const g = await startGateway(name, {
    root: ROOT,
    mockPort,
    port: await freePort(),
    cpu: null,
    logDir,
    // With the code map V8 also opens its own log: kept beside the rest, not in the working directory.
    nodeFlags: ['--predictable', ...(FUNCTIONS > 0 ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(logDir, `${name}.v8.log`)}`] : [])],
    config: args.config ? resolve(args.config) : undefined,
    baselineRoot: args.baseline ? resolve(args.baseline) : undefined,
    wrapper: ['valgrind', '--tool=callgrind', `--callgrind-out-file=${out}.%p`, '--cache-sim=no', '--dump-line=no', '--compress-strings=no'],
    startTimeoutMs: 300_000,
  });
  const pool = new Pool(`http://127.0.0.1:${g.port}`, { connections: CONNECTIONS });
  const perRequest: number[] = [];
  const files: string[] = [];
  try {
    const body = chatBody(CASE, g.model);
    const headers = { ...g.headers, 'content-type': 'application/json' };
    await load(pool, body, headers, WARMUP);
    await dump(g, pool, out);
    for (let w = 0; w < WINDOWS; w++) {
      await load(pool, body, headers, WINDOW);
      const { total, file } = await dump(g, pool, out);
      perRequest.push(total / WINDOW);
      files.push(file);
    }
  } finally {
    await pool.close();
    await g.stop();
  }
  if (FUNCTIONS === 0) return { path: name, perRequest };
  // V8 writes its code map as it goes and completes it at exit: read once the gateway stopped.
  const lowest = files[perRequest.indexOf(Math.min(...perRequest))]!;
  return { path: name, perRequest, functions: await byFunction(lowest, g.pid, WINDOW, join(logDir, `${name}.perf.map`), args['charge-to-js']) };
}

/** `n` requests over the pool's connections; every one must succeed. */
async function load(pool: Pool, body: string, headers: Record<string, string>, n: number): Promise<void> {
  let sent = 0;
  const worker = async () => {
    while (sent < n) {
      sent++;
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

/**
 * Instructions since the last dump. `callgrind_control` asks valgrind (through
 * vgdb) and returns once the dump is written; where vgdb cannot interrupt an
 * idle process, valgrind acts at the next basic block the gateway runs, so
 * after a few seconds without a file a ping wakes it (a ping is a few
 * thousand instructions against a window's millions).
 */
async function dump(g: Gateway, pool: Pool, out: string): Promise<{ total: number; file: string }> {
  const prefix = `${out.split('/').pop()}.${g.pid}.`;
  const dir = dirname(out);
  const files = () => readdirSync(dir).filter((f) => f.startsWith(prefix));
  const before = files().length;
  // Asynchronous: the loop below stays free to ping while valgrind is asked.
  const asked = execFileAsync('callgrind_control', ['--dump', String(g.pid)], { timeout: 120_000 });
  let answered = false;
  void asked.then(
    () => (answered = true),
    () => (answered = true),
  );
  for (let i = 0; files().length === before; i++) {
    if (i === 1200) throw new Error(`${g.name}: callgrind never dumped`);
    if (i >= 30 && i % 10 === 0) {
      const r = await pool.request({ method: 'GET', path: '/healthz', headers: g.headers });
      await r.body.text();
    }
    if (answered && i % 50 === 49) await asked; // a failed callgrind_control surfaces here
    await new Promise((r) => setTimeout(r, 100));
  }
  await asked.catch(() => {}); // the file is there: the dump was taken
  const file = join(dir, `${prefix}${before + 1}`);
  // The file appears before it is written: callgrindTotal waits for its last line.
  for (let i = 0; i < 1200; i++) {
    const total = callgrindTotal(readFileSync(file, 'utf8'));
    if (total !== undefined) return { total, file };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${g.name}: ${file} never completed`);
}

async function main(): Promise<void> {
  const logDir = mkdtempSync(join(tmpdir(), 'switchyard-count-'));
  const mock = startMock();
  const mockPort = await mock.listening;
  console.log(`Switchyard instruction count — ${new Date().toISOString()}`);
  console.log(`${CASE_LABEL[CASE]}, ${CONNECTIONS} connections; ${WARMUP} warm-up requests, then ${WINDOWS} windows × ${WINDOW}; valgrind files and logs in ${logDir}`);
  const results: Count[] = [];
  // Two at a time: one per core. Both settle (each stops its gateway) before a failure is reported.
  for (let i = 0; i < paths.length; i += 2) {
    const settled = await Promise.allSettled(paths.slice(i, i + 2).map((p) => count(p, mockPort, logDir)));
    for (const s of settled) {
      if (s.status === 'rejected') {
        mock.server.close();
        throw s.reason;
      }
      results.push(s.value);
    }
  }
  mock.server.close();
  console.log(countTable(results));
  const [first, ...others] = results;
  if (first?.functions === undefined) return;
  const charged = args['charge-to-js'] ? ' (native work charged to the JavaScript that called it)' : '';
  console.log(functionTable(`${LABEL[first.path]}${charged}`, first.functions, FUNCTIONS));
  for (const r of others) console.log(functionTable(`${LABEL[r.path]}${charged}`, r.functions!, FUNCTIONS, { label: LABEL[first.path], counts: first.functions }));
}

await main();
