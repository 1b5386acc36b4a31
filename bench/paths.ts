/**
 * The paths the benchmark compares, as child processes: how each is started,
 * and the request head each expects. All run from built code (dist/
 * for Switchyard, the npm build for Portkey) with the lag probe preloaded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join, resolve } from 'node:path';

export type PathName = 'bare' | 'parsing' | 'switchyard' | 'portkey' | 'baseline';
export const PATHS: PathName[] = ['bare', 'parsing', 'switchyard', 'portkey'];
export const LABEL: Record<PathName, string> = {
  bare: 'bare undici proxy',
  parsing: 'parsing proxy',
  switchyard: 'Switchyard',
  portkey: 'Portkey 1.15.2',
  baseline: 'Switchyard (baseline build)',
};

/** The client key the bench config accepts (it has keys: every request is authenticated). */
export const BENCH_KEY = 'sk-switchyard-bench-client';
const UPSTREAM_KEY = 'sk-bench-upstream';

export interface Gateway {
  name: PathName;
  proc: ChildProcess;
  pid: number;
  port: number;
  /** `model` to send, and extra request headers. */
  model: string;
  headers: Record<string, string>;
  /** Ask the preloaded probe for event-loop lag. */
  lagStart(): Promise<void>;
  lag(): Promise<LagReport>;
  /** Any other request to the probe (bench/probe.mjs): send `type` with `params`, resolve with the `reply` message. */
  ask<T>(type: string, reply: string, params?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

export interface StartGatewayOptions {
  root: string;
  mockPort: number;
  port: number;
  /** taskset CPU list, or null to run unpinned. */
  cpu: string | null;
  logDir: string;
  /** Extra node flags (e.g. --cpu-prof) for this path. */
  nodeFlags?: string[];
  /** Switchyard's config (default bench/switchyard.bench.yaml). */
  config?: string;
  /** `baseline`: another checkout, built (its bin/ and dist/), run with the same config. */
  baselineRoot?: string;
  /** A command to run the gateway under (valgrind and its options: bench/count.ts); replaces taskset. */
  wrapper?: string[];
  /** How long it may take to accept connections (default 30 s; valgrind needs more). */
  startTimeoutMs?: number;
}

/** Event-loop lag over the hold, and the garbage collector's pauses over the same window. */
export interface LagReport {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The longest single GC pause, and its kind (scavenge, mark-compact, …). */
  gcMaxMs: number;
  gcMaxKind: string;
  gcTotalMs: number;
}

export async function startGateway(name: PathName, o: StartGatewayOptions): Promise<Gateway> {
  const probe = ['--import', join(o.root, 'bench/probe.mjs')];
  const mockBase = `http://127.0.0.1:${o.mockPort}/v1`;
  let args: string[];
  let model = 'gpt-4o-mini';
  let headers: Record<string, string> = { authorization: `Bearer ${UPSTREAM_KEY}` };
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production' };
  if (name === 'bare') {
    args = [...probe, join(o.root, 'bench/bare-proxy.mjs')];
    env.UPSTREAM = `http://127.0.0.1:${o.mockPort}`;
    env.PORT = String(o.port);
  } else if (name === 'parsing') {
    args = [...probe, join(o.root, 'bench/parsing-proxy.mjs')];
    Object.assign(env, { UPSTREAM: `http://127.0.0.1:${o.mockPort}`, UPSTREAM_KEY, UPSTREAM_MODEL: 'gpt-4o-mini', PORT: String(o.port) });
  } else if (name === 'switchyard' || name === 'baseline') {
    const root = name === 'baseline' ? o.baselineRoot! : o.root;
    args = [...probe, join(root, 'bin/switchyard.js'), 'serve', '--config', o.config ?? join(o.root, 'bench/switchyard.bench.yaml'), '--port', String(o.port)];
    Object.assign(env, { MOCK_URL: mockBase, BENCH_UPSTREAM_KEY: UPSTREAM_KEY, BENCH_KEY, LOG_LEVEL: 'warn' });
    model = 'chat';
    headers = { authorization: `Bearer ${BENCH_KEY}` };
  } else {
    args = [...probe, '--import', join(o.root, 'bench/portkey-hooks.mjs'), join(o.root, 'node_modules/@portkey-ai/gateway/build/start-server.js'), `--port=${o.port}`, '--headless'];
    headers = { authorization: `Bearer ${UPSTREAM_KEY}`, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': mockBase };
  }
  const log = openSync(join(o.logDir, `${name}.log`), 'a');
  const node = [process.execPath, ...(o.nodeFlags ?? []), ...args];
  const command = o.wrapper ? [...o.wrapper, ...node] : o.cpu === null ? node : ['taskset', '-c', o.cpu, ...node];
  const proc = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', log, log, 'ipc'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    await waitForPort(o.port, proc, o.startTimeoutMs ?? 30_000);
  } catch (err) {
    proc.kill('SIGKILL'); // never listened: nothing to shut down gracefully, and nothing may outlive the run
    throw err;
  }

  const ask = <T>(type: string, reply: string, params: Record<string, unknown> = {}): Promise<T> =>
    new Promise((resolve, reject) => {
      const on = (m: { type?: string }) => {
        if (m?.type !== reply) return;
        proc.off('message', on);
        resolve(m as T);
      };
      proc.on('message', on);
      proc.send({ ...params, type }, (err) => err && reject(err));
    });

  return {
    name,
    proc,
    pid: proc.pid!,
    port: o.port,
    model,
    headers,
    lagStart: () => ask<unknown>('lag-start', 'lag-started').then(() => {}),
    lag: () => ask('lag', 'lag'),
    ask,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Resolves once something accepts connections on `port`. */
async function waitForPort(port: number, proc: ChildProcess, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`gateway exited (${proc.exitCode ?? proc.signalCode}) before listening on ${port}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ port, host: '127.0.0.1' }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listening on ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A whole HTTP/1.1 request to send as is. */
export function httpRequest(g: Gateway, port: number, body: string): string {
  let head = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (const [k, v] of Object.entries(g.headers)) head += `${k}: ${v}\r\n`;
  return `${head}\r\n${body}`;
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

/** A command-line number that must be positive (`--name`). */
export function positiveArg(name: string, v: string | undefined): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got '${v}'`);
  return n;
}

/**
 * startGateway's options for a script run with loadOptions' arguments: unpinned, the `--config`
 * and `--baseline` given, and `nodeFlags` for the gateway's node.
 */
export function unpinnedGateway(
  args: { config?: string; baseline?: string },
  where: { root: string; mockPort: number; port: number; logDir: string },
  nodeFlags?: string[],
): StartGatewayOptions {
  return {
    ...where,
    cpu: null,
    nodeFlags,
    config: args.config ? resolve(args.config) : undefined,
    baselineRoot: args.baseline ? resolve(args.baseline) : undefined,
  };
}

/**
 * The options bench:gc and bench:alloc share (parseArgs form): which paths, a baseline
 * checkout, a config, the case, and the load (warm-up and measured seconds, connections).
 */
export function loadOptions(seconds: string) {
  return {
    paths: { type: 'string', default: 'bare,switchyard' },
    baseline: { type: 'string' },
    config: { type: 'string' },
    case: { type: 'string', default: 'buffered' },
    warmup: { type: 'string', default: '5' },
    seconds: { type: 'string', default: seconds },
    connections: { type: 'string', default: '8' },
  } as const;
}

/** `--paths` as a list of known paths; `baseline` needs `--baseline DIR`. */
export function pathsArg(list: string, baseline: string | undefined): PathName[] {
  const paths = list.split(',') as PathName[];
  for (const p of paths) if (!(p in LABEL)) throw new Error(`--paths: no path '${p}' (${Object.keys(LABEL).join(', ')})`);
  if (paths.includes('baseline') && !baseline) throw new Error('--paths baseline needs --baseline DIR');
  return paths;
}
