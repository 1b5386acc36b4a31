/**
 * The real `switchyard serve` process (bin/switchyard.js over the built dist/):
 * the `listening on http://HOST:PORT` line, a request served, SIGTERM draining
 * an in-flight stream and exiting 0 (SIGINT too), `--port`/`--host` over
 * `PORT`/`HOST` over the file, `--config` over `SWITCHYARD_CONFIG` over
 * `./switchyard.yaml`, and
 * which config file the log says it used. And `--version`, from the checkout and
 * from an installed package.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readUntil, sseData } from '../server/wire.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchyard.js');
const dir = mkdtempSync(join(tmpdir(), 'switchyard-serve-'));

// 30 pieces at 30 a second: a one-second stream.
const CONFIG = `
server:
  host: 127.0.0.1
  port: 0
  shutdownGraceMs: 8000
providers:
  - id: sim
    type: simulated
    simulate: { latencyMs: 0, ttftMs: 0, tokensPerSecond: 30, reply: "${Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ')}" }
models:
  - name: fast
    deployments:
      - provider: sim
        model: sim-mini
`;
const configFile = join(dir, 'gateway.yaml');

beforeAll(() => {
  writeFileSync(configFile, CONFIG);
  // bin/ runs dist/ (what `npm ci` builds through `prepare`): build the current sources once.
  // Type errors elsewhere do not stop tsc from emitting, so only the output is checked.
  spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'ignore' });
  expect(existsSync(join(ROOT, 'dist/cli/main.js'))).toBe(true);
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Cli {
  child: ChildProcess;
  output: string[];
  /** Resolves with the first output line matching `re`. */
  line(re: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: ChildProcess[] = [];
afterEach(() => {
  // Only the processes this file started, by pid.
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // npm_lifecycle_event: set when the suite runs under `npm test`; it turns on serve's parent watch.
  for (const k of ['PORT', 'HOST', 'SWITCHYARD_CONFIG', 'REDIS_URL', 'LOG_LEVEL', 'REQUEST_TIMEOUT_MS', 'MAX_RETRIES', 'DEFAULT_RPM', 'THROTTLE_MAX_WAIT_MS', 'npm_lifecycle_event']) delete env[k];
  return { ...env, ...extra };
}

/** `underShell`: as `npm start` runs it, under `sh -c`, a shell that stays the gateway's parent. */
function cli(args: string[], opts: { cwd?: string; env?: Record<string, string>; underShell?: boolean } = {}): Cli {
  const [file, argv] = opts.underShell
    ? ['/bin/sh', ['-c', '"$0" "$@"; exit $?', process.execPath, BIN, ...args]]
    : [process.execPath, [BIN, ...args]];
  const child = spawn(file, argv, { cwd: opts.cwd ?? ROOT, env: cleanEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  const output: string[] = [];
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  const onLine = (l: string) => {
    output.push(l);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.re.test(l)) waiters.splice(i, 1)[0]!.resolve(l);
    }
  };
  for (const stream of [child.stdout!, child.stderr!]) {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) !== -1) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  }
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  return {
    child,
    output,
    exited,
    line(re, timeoutMs = 15_000) {
      const seen = output.find((l) => re.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no line matching ${re} within ${timeoutMs} ms; output:\n${output.join('\n')}`)), timeoutMs);
        waiters.push({
          re,
          resolve: (l) => {
            clearTimeout(t);
            resolve(l);
          },
        });
        void exited.then(() => {
          clearTimeout(t);
          reject(new Error(`exited before a line matching ${re}; output:\n${output.join('\n')}`));
        });
      });
    },
  };
}

const LISTENING = /listening on http:\/\/127\.0\.0\.1:(\d+)/;
const portOf = (line: string) => Number(LISTENING.exec(line)![1]);

async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as { port: number }).port, server };
}

describe('switchyard serve (a real process)', () => {
  it('logs where it listens and which config it uses, serves, and on SIGTERM drains a stream then exits 0', async () => {
    const p = cli(['serve', '--config', configFile, '--port', '0']);
    const port = portOf(await p.line(LISTENING));
    expect(port).toBeGreaterThan(0);
    expect(p.output.join('\n')).toContain(`using config ${configFile}`);

    const ok = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-switchyard-deployment')).toBe('sim/sim-mini');
    await ok.text();
    // Every name prefixed `switchyard_`, the process metrics `serve` adds included.
    const samples = (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(samples.some((l) => l.startsWith('switchyard_process_'))).toBe(true);
    expect(samples.filter((l) => !l.startsWith('switchyard_'))).toEqual([]);

    const stream = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'fast', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const reading = readUntil(stream.body!, (t) => t.includes('data: [DONE]'));
    const t0 = Date.now();
    p.child.kill('SIGTERM');
    const text = await reading;
    expect(sseData(text).at(-1)).toBe('[DONE]');
    const { code, signal } = await p.exited;
    expect(signal).toBeNull();
    expect(code).toBe(0);
    // Well within the 8 s grace: it waited for the stream, not the whole grace.
    expect(Date.now() - t0).toBeLessThan(6000);
    expect(p.output.join('\n')).toMatch(/shutting down/);
  });

  it('a second signal stops waiting for in-flight streams', async () => {
    const slowConfig = join(dir, 'slow.yaml');
    writeFileSync(slowConfig, CONFIG.replace('tokensPerSecond: 30', 'tokensPerSecond: 2')); // a 15 s stream
    const p = cli(['serve', '--config', slowConfig, '--port', '0']);
    const port = portOf(await p.line(LISTENING));
    const stream = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'fast', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const reading = readUntil(stream.body!, () => false).catch(() => 'cut');
    p.child.kill('SIGTERM');
    await p.line(/shutting down/);
    const t0 = Date.now();
    p.child.kill('SIGTERM');
    const { code } = await p.exited;
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(await reading).not.toContain('[DONE]');
  });

  it('--port beats PORT, which beats the file', async () => {
    // PORT names a port that is taken: using it would fail with EADDRINUSE.
    const taken = await occupiedPort();
    try {
      const p = cli(['serve', '--config', configFile, '--port', '0'], { env: { PORT: String(taken.port) } });
      const port = portOf(await p.line(LISTENING));
      expect(port).not.toBe(taken.port);
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
    } finally {
      taken.server.close();
    }
    // PORT over the file's port 0: a port picked here, free again, is what it binds.
    const probe = await occupiedPort();
    const wanted = probe.port;
    await new Promise((r) => probe.server.close(r));
    const q = cli(['serve', '--config', configFile], { env: { PORT: String(wanted) } });
    expect(portOf(await q.line(LISTENING))).toBe(wanted);
    q.child.kill('SIGINT');
    expect((await q.exited).code).toBe(0);
  });

  it('--host beats HOST and --config beats SWITCHYARD_CONFIG; SIGINT drains a stream then exits 0 (found by the contract audit)', async () => {
    // Each variable here would stop the gateway if it were read: HOST public without keys,
    // PORT not a number, SWITCHYARD_CONFIG a file with an unknown field.
    const bad = join(dir, 'flags-bad.yaml');
    writeFileSync(bad, 'server:\n  colour: blue\nproviders: []\nmodels: []\n');
    const p = cli(['serve', '--config', configFile, '--port', '0', '--host', '127.0.0.1'], {
      env: { HOST: '0.0.0.0', PORT: 'abc', SWITCHYARD_CONFIG: bad },
    });
    const port = portOf(await p.line(LISTENING));
    expect(p.output.join('\n')).toContain(`using config ${configFile}`);
    const stream = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'fast', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const reading = readUntil(stream.body!, (t) => t.includes('data: [DONE]'));
    p.child.kill('SIGINT');
    expect(sseData(await reading).at(-1)).toBe('[DONE]');
    expect(await p.exited).toEqual({ code: 0, signal: null });
  });

  it('HOST beats the file, and SWITCHYARD_CONFIG beats ./switchyard.yaml (found by the contract audit)', async () => {
    // The file says 127.0.0.1 and has no keys: HOST=0.0.0.0 read over it is refused at start-up.
    const cwd = mkdtempSync(join(dir, 'env-'));
    writeFileSync(join(cwd, 'switchyard.yaml'), 'server:\n  colour: blue\nproviders: []\nmodels: []\n');
    const p = cli(['serve', '--port', '0'], { cwd, env: { HOST: '0.0.0.0', SWITCHYARD_CONFIG: configFile } });
    expect((await p.exited).code).toBe(1);
    const said = p.output.join('\n');
    expect(said).toMatch(/^keys: required when server\.host \(0\.0\.0\.0\) is not a loopback address/m);
    expect(said).not.toMatch(/colour/);
  });

  it.runIf(process.platform !== 'win32')('under npm, a SIGTERM that kills only the shell between npm and the gateway still drains it and stops it (found by the contract audit)', async () => {
    // npm start passes SIGTERM to its `sh -c` alone; dash dies of it and the gateway ran on, orphaned.
    const p = cli(['serve', '--config', configFile, '--port', '0'], { underShell: true, env: { npm_lifecycle_event: 'start' } });
    const listening = await p.line(LISTENING);
    const gatewayPid = (JSON.parse(listening) as { pid: number }).pid;
    expect(gatewayPid).not.toBe(p.child.pid);
    try {
      const port = portOf(listening);
      const stream = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'fast', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const reading = readUntil(stream.body!, (t) => t.includes('data: [DONE]'));
      const closed = once(p.child, 'close'); // the gateway holds the pipes: they close when it exits
      p.child.kill('SIGTERM');
      expect((await p.exited).signal).toBe('SIGTERM');
      expect(sseData(await reading).at(-1)).toBe('[DONE]');
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        closed,
        new Promise((_, reject) => (bound = setTimeout(() => reject(new Error('the gateway outlived its shell')), 8000))),
      ]).finally(() => clearTimeout(bound));
      expect(p.output.join('\n')).toMatch(/"event":"stopped"/);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      try {
        process.kill(gatewayPid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    }
  });

  it.runIf(process.platform !== 'win32')('outside npm, the gateway keeps serving when the shell that started it exits (nohup … &)', async () => {
    const p = cli(['serve', '--config', configFile, '--port', '0'], { underShell: true });
    const listening = await p.line(LISTENING);
    const gatewayPid = (JSON.parse(listening) as { pid: number }).pid;
    try {
      const closed = once(p.child, 'close');
      p.child.kill('SIGTERM');
      expect((await p.exited).signal).toBe('SIGTERM');
      // Several polls of the parent watch: a watching gateway would be shutting down by now.
      await new Promise((r) => setTimeout(r, 1000));
      const res = await fetch(`http://127.0.0.1:${portOf(listening)}/healthz`);
      expect(res.status).toBe(200);
      expect(p.output.join('\n')).not.toMatch(/"event":"shutdown"/);
      process.kill(gatewayPid, 'SIGTERM');
      await closed;
    } finally {
      try {
        process.kill(gatewayPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  it('the ready line names the host as configured (--host localhost), with the port the OS chose', async () => {
    const p = cli(['serve', '--config', configFile, '--port', '0', '--host', 'localhost']);
    const line = await p.line(/listening on http:\/\/localhost:\d+/);
    const logged = JSON.parse(line) as { url: string; address: string; msg: string };
    const port = Number(/localhost:(\d+)/.exec(logged.msg)![1]);
    expect(port).toBeGreaterThan(0);
    expect(logged.url).toBe(`http://localhost:${port}`);
    // The bound address is there too, for whoever needs the numeric one.
    expect(logged.address).toMatch(new RegExp(`^http://(127\\.0\\.0\\.1|\\[::1\\]):${port}$`));
    expect((await fetch(`${logged.address}/healthz`)).status).toBe(200);
    p.child.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
  });

  it('without a config it says it uses the bundled demo', async () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    const p = cli(['serve', '--port', '0'], { cwd: empty });
    await p.line(LISTENING);
    const said = p.output.join('\n');
    expect(said).toMatch(/bundled demo config/);
    expect(said).toContain('examples/demo.yaml');
    p.child.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
  });

  it('takes SWITCHYARD_CONFIG, else ./switchyard.yaml, and says so', async () => {
    const p = cli(['serve', '--port', '0'], { cwd: dir, env: { SWITCHYARD_CONFIG: configFile } });
    await p.line(LISTENING);
    expect(p.output.join('\n')).toContain(`using config ${configFile}`);
    p.child.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);

    const local = mkdtempSync(join(dir, 'local-'));
    writeFileSync(join(local, 'switchyard.yaml'), CONFIG);
    const q = cli(['serve', '--port', '0'], { cwd: local });
    await q.line(LISTENING);
    expect(q.output.join('\n')).toContain(`using config ${join(local, 'switchyard.yaml')}`);
    q.child.kill('SIGTERM');
    expect((await q.exited).code).toBe(0);
  });

  it('exits 1 with `path: reason` lines for a bad config, and 2 for a bad flag', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'server:\n  colour: blue\nproviders: []\nmodels: []\n');
    const p = cli(['serve', '--config', bad]);
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.output.join('\n')).toMatch(/^server\.colour: /m);
    const q = cli(['serve', '--port', 'eighty']);
    expect((await q.exited).code).toBe(2);
  });

  it('exits 1, promptly, when its port is taken', async () => {
    const taken = await occupiedPort();
    try {
      const p = cli(['serve', '--config', configFile, '--port', String(taken.port)]);
      const { code } = await p.exited;
      expect(code).toBe(1);
      // In the config's words: node's own is `listen EADDRINUSE: address already in use`.
      expect(p.output.join('\n')).toContain(`server.port: cannot listen on 127.0.0.1:${taken.port}: the port is already in use`);
    } finally {
      taken.server.close();
    }
  });
});

describe('switchyard --version (a real process)', () => {
  it('prints the checkout\'s version from any working directory, and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const p = cli(['--version'], { cwd: dir });
    expect((await p.exited).code).toBe(0);
    expect(p.output).toEqual([version]);
  });

  it('installed, prints its own package\'s version, not the one of the directory it runs in', async () => {
    // node_modules/switchyard as npm installs it (package.json's `files`), its dependencies beside it.
    const pkg = join(mkdtempSync(join(dir, 'installed-')), 'node_modules', 'switchyard');
    mkdirSync(pkg, { recursive: true });
    for (const part of ['bin', 'dist']) cpSync(join(ROOT, part), join(pkg, part), { recursive: true });
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ ...manifest, version: '9.8.7-installed' }));
    symlinkSync(join(ROOT, 'node_modules'), join(pkg, 'node_modules'));
    const child = spawn(process.execPath, [join(pkg, 'bin/switchyard.js'), '-v'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(child);
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(out).toBe('9.8.7-installed\n');
    expect(code).toBe(0);
  });
});
