/**
 * What start-up says about a config it runs, and about one it cannot run. `state.backend: redis` is accepted
 * (so configs written for shared state load), but shared state is not built
 * yet: start-up must say so, not pretend. A hosted provider without a key is
 * warned about once, as `check` does, not discovered as 401s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { startSwitchyard } from '../../src/core/start.js';
import { createLogger } from '../../src/observability/logger.js';

/** A logger whose lines (pino's JSON, one a write) land in `lines`. */
function capturedLog() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger({ destination: sink }) };
}

it('warns that the redis state backend is not implemented, and readiness names the real backend', async () => {
  const { lines, logger } = capturedLog();
  const config = parseConfig(
    { state: { backend: 'redis', redisUrl: 'redis://127.0.0.1:6379' }, providers: [{ id: 'p', type: 'simulated' }] },
    {},
  );
  const running = await startSwitchyard(config, { port: 0, host: '127.0.0.1', observability: { logger } });
  try {
    expect(lines.some((l) => l.includes('"backend":"redis"') && l.includes('not implemented'))).toBe(true);
    const ready = (await (await fetch(`${running.url}/readyz`)).json()) as { state: string };
    expect(ready.state).toBe('memory');
  } finally {
    await running.close(0);
  }
});

it('warns at start-up about a hosted provider without a key, naming the field, and not about one with a key', async () => {
  const { lines, logger } = capturedLog();
  const config = parseConfig(
    {
      providers: [
        { id: 'keyless', type: 'anthropic' },
        { id: 'keyed', type: 'openai', apiKey: '${TEST_OPENAI_KEY}' },
      ],
      models: [{ name: 'chat', deployments: [{ provider: 'keyed', model: 'gpt-4o-mini' }, { provider: 'keyless', model: 'claude-3-5-haiku-latest' }] }],
    },
    { TEST_OPENAI_KEY: 'sk-test-not-logged' },
  );
  // Nothing is sent upstream: the warning is the config's alone.
  const running = await startSwitchyard(config, { port: 0, host: '127.0.0.1', observability: { logger } });
  try {
    const warnings = lines.map((l) => JSON.parse(l) as { level: number; event?: string; msg: string }).filter((l) => l.event === 'config');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe(40); // pino's warn
    expect(warnings[0]!.msg).toMatch(/^providers\[0\]\.apiKey: .*'keyless'/);
    expect(lines.join('')).not.toContain('sk-test-not-logged');
  } finally {
    await running.close(0);
  }
});

const SIMULATED = { providers: [{ id: 'p', type: 'simulated' }], models: [{ name: 'm', deployments: [{ provider: 'p', model: 'x' }] }] };

it('says which setting stops it listening, in the config\'s words: a port in use, a host that does not resolve', async () => {
  const taken = createServer().listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const port = (taken.address() as { port: number }).port;
  try {
    await expect(startSwitchyard(parseConfig(SIMULATED, {}), { port, host: '127.0.0.1' })).rejects.toThrow(
      `server.port: cannot listen on 127.0.0.1:${port}: the port is already in use`,
    );
  } finally {
    taken.close();
  }
  // .invalid never resolves (RFC 6761); without a network the lookup fails the same way.
  await expect(startSwitchyard(parseConfig(SIMULATED, {}), { port: 0, host: 'gateway.invalid' })).rejects.toThrow(
    'server.host: cannot listen on gateway.invalid:0: the host name does not resolve',
  );
});

it('gives the ready line\'s URL with the host as configured and the bound port; `url` stays the bound address', async () => {
  const byName = await startSwitchyard(parseConfig(SIMULATED, {}), { port: 0, host: 'localhost', observability: { logger: capturedLog().logger } });
  try {
    expect(byName.port).toBeGreaterThan(0);
    expect(byName.listenUrl).toBe(`http://localhost:${byName.port}`);
    expect(byName.url).toMatch(new RegExp(`^http://(127\\.0\\.0\\.1|\\[::1\\]):${byName.port}$`));
  } finally {
    await byName.close(0);
  }
  const v6 = await startSwitchyard(parseConfig(SIMULATED, {}), { port: 0, host: '::1', observability: { logger: capturedLog().logger } }).catch(() => undefined);
  if (v6 === undefined) return; // no IPv6 loopback on this machine
  try {
    expect(v6.listenUrl).toBe(`http://[::1]:${v6.port}`);
  } finally {
    await v6.close(0);
  }
});

it('names traces.path and the file when the trace database cannot be opened', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-start-'));
  try {
    // A directory where the database file should be: SQLite says only "unable to open database file".
    const config = parseConfig({ ...SIMULATED, traces: { store: 'sqlite', path: dir } }, {});
    await expect(startSwitchyard(config, { port: 0, host: '127.0.0.1' })).rejects.toThrow(
      new RegExp(`^traces\\.path: cannot open the trace database ${dir}: `),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// node's recursive mkdirSync spins for ever under /proc; start-up must refuse instead.
it.runIf(process.platform === 'linux')('refuses a traces.path under /proc instead of hanging', async () => {
  const config = parseConfig({ ...SIMULATED, traces: { store: 'sqlite', path: '/proc/switchyard-none/traces.db' } }, {});
  await expect(startSwitchyard(config, { port: 0, host: '127.0.0.1' })).rejects.toThrow(
    /^traces\.path: cannot open the trace database \/proc\/switchyard-none\/traces\.db: ENOENT/,
  );
});
