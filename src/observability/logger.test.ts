import { execFileSync } from 'node:child_process';
import { constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { attempt, testConfig, trace } from '../../test/helpers/observability-fixtures.js';
import { parsePrometheusText, sampleValue } from '../../test/helpers/prom-parse.js';
import { createObservability } from './create-observability.js';
import { EventBus } from './events.js';
import { createLogger, createRequestLogger, createSilentLogger, droppedLogLines, flushLogger, MAX_LOG_BUFFER_BYTES } from './logger.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(l);
      cb();
    },
  });
  return { lines, stream, json: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  const saved = process.env.LOG_LEVEL;
  afterEach(() => {
    if (saved === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = saved;
  });

  it('writes JSON lines and redacts secrets by key name, at the top and under the usual parents', () => {
    const out = capture();
    const logger = createLogger({ destination: out.stream, level: 'info' });
    logger.info(
      {
        authorization: 'Bearer SECRET-1',
        'x-api-key': 'SECRET-2',
        headers: { authorization: 'Bearer SECRET-3', 'x-api-key': 'SECRET-4', 'api-key': 'SECRET-5', accept: 'application/json' },
        req: { headers: { authorization: 'Bearer SECRET-6', 'x-api-key': 'SECRET-7' } },
        provider: { id: 'openai', apiKey: 'SECRET-8' },
        key: { id: 'team-a', key: 'SECRET-9' },
        apiKey: 'SECRET-10',
        server: { adminKey: 'SECRET-11', port: 4000 },
        err: { headers: { 'api-key': 'SECRET-12' } },
        upstream: { headers: { authorization: 'SECRET-13' } },
      },
      'hello',
    );
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).not.toMatch(/SECRET/);
    const line = out.json()[0]!;
    expect(line.msg).toBe('hello');
    expect(line.level).toBe(30);
    expect(line.headers).toEqual({ authorization: '[redacted]', 'x-api-key': '[redacted]', 'api-key': '[redacted]', accept: 'application/json' });
    expect(line.provider).toEqual({ id: 'openai', apiKey: '[redacted]' });
    expect(line.server).toEqual({ adminKey: '[redacted]', port: 4000 });
    expect(line.key).toBe('[redacted]');
    expect(typeof line.time).toBe('string'); // ISO time
  });

  it('takes its level from LOG_LEVEL, defaulting to info (also for an unknown level, which it says)', () => {
    process.env.LOG_LEVEL = 'warn';
    const quiet = capture();
    expect(createLogger({ destination: quiet.stream }).level).toBe('warn');
    expect(quiet.lines).toEqual([]);
    process.env.LOG_LEVEL = 'LOUD';
    const loud = capture();
    expect(createLogger({ destination: loud.stream }).level).toBe('info');
    expect(loud.json()).toMatchObject([{ level: 40, event: 'config', msg: expect.stringContaining("LOG_LEVEL 'loud' is not a level") }]);
    delete process.env.LOG_LEVEL;
    expect(createLogger({ destination: capture().stream }).level).toBe('info');
  });

  it('the silent logger writes nothing; flushLogger resolves for any destination', async () => {
    const silent = createSilentLogger();
    expect(silent.isLevelEnabled('fatal')).toBe(false);
    await expect(flushLogger(silent)).resolves.toBeUndefined();
    await expect(flushLogger(createLogger({ destination: capture().stream }))).resolves.toBeUndefined();
  });
});

describe('createRequestLogger', () => {
  const setup = (level = 'info') => {
    const out = capture();
    const bus = new EventBus();
    const logger = createLogger({ destination: out.stream, level });
    const rl = createRequestLogger(bus, logger);
    return { out, bus, rl };
  };

  it('writes one line per request, after the emit returns, with routing facts only', async () => {
    const { out, bus } = setup();
    bus.emit(
      'request',
      trace({
        id: 'req-42',
        keyId: 'team-a',
        selection: 'weighted: 3/4',
        fallbackUsed: true,
        attempts: [attempt({ status: 429, errorType: 'rate_limited', message: 'MARKER-upstream-said' }), attempt()],
        durationMs: 812,
        overheadMs: 0.7,
      }),
    );
    expect(out.lines).toHaveLength(0); // the listener only queued it
    await tick();
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).not.toContain('MARKER');
    expect(out.json()[0]).toMatchObject({
      level: 30,
      event: 'request',
      id: 'req-42',
      keyId: 'team-a',
      model: 'fast',
      deployment: 'openai/gpt-4o-mini',
      selection: 'weighted: 3/4',
      status: 200,
      attempts: 2,
      fallbackUsed: true,
      durationMs: 812,
      overheadMs: 0.7,
      errorCode: null,
    });
  });

  it('logs failed requests at warn, with their error code', async () => {
    const { out, bus } = setup();
    bus.emit('request', trace({ status: 503, errorCode: 'all_candidates_unavailable', deployment: null }));
    await tick();
    expect(out.json()[0]).toMatchObject({ level: 40, status: 503, errorCode: 'all_candidates_unavailable', deployment: null });
  });

  it('logs breaker, cooldown and state changes', () => {
    const { out, bus } = setup();
    bus.emit('breaker', { deployment: 'openai/gpt-4o-mini', from: 'closed', to: 'open', at: 0 });
    bus.emit('breaker', { deployment: 'openai/gpt-4o-mini', from: 'open', to: 'half_open', at: 1 });
    bus.emit('cooldown', { deployment: 'local/llama3', untilMs: Date.UTC(2026, 0, 1), reason: 'rate_limited' });
    bus.emit('state', { backend: 'redis', healthy: false, message: 'ECONNREFUSED' });
    bus.emit('state', { backend: 'redis', healthy: true });
    expect(out.json().map((l) => [l.event, l.level])).toEqual([
      ['breaker', 40],
      ['breaker', 30],
      ['cooldown', 30],
      ['state', 40],
      ['state', 30],
    ]);
    expect(out.json()[2]).toMatchObject({ deployment: 'local/llama3', reason: 'rate_limited', until: '2026-01-01T00:00:00.000Z' });
  });

  it('respects the level: at warn, successful requests are not even queued', async () => {
    const { out, bus } = setup('warn');
    bus.emit('request', trace());
    bus.emit('request', trace({ status: 502, errorCode: 'upstream_error' }));
    await tick();
    expect(out.json().map((l) => l.status)).toEqual([502]);
  });

  it('close() writes what is queued and stops listening', () => {
    const { out, bus, rl } = setup();
    bus.emit('request', trace({ id: 'last' }));
    rl.close();
    expect(out.json().map((l) => l.id)).toEqual(['last']);
    bus.emit('request', trace());
    bus.emit('breaker', { deployment: 'x/y', from: 'closed', to: 'open', at: 0 });
    expect(out.lines).toHaveLength(1);
  });
});

describe('the default destination when stdout is not read', () => {
  it('keeps at most MAX_LOG_BUFFER_BYTES waiting, and drains once the reader reads again', async () => {
    // A FIFO nobody reads stands for a stdout pipe whose collector stalled: once the
    // kernel's pipe buffer (64 KiB) is full, every line waits in the process.
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-log-'));
    const path = join(dir, 'stdout');
    execFileSync('mkfifo', [path]);
    const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    const logger = createLogger({ fd, level: 'info' });
    const dest = (logger as unknown as Record<symbol, SonicBoomLike>)[pino.symbols.streamSym]!;
    let drops = 0;
    dest.on('drop', () => drops++);
    try {
      const pad = 'x'.repeat(400);
      let most = 0;
      // ~28 MiB of lines, what a busy gateway writes in a minute or two.
      for (let i = 0; i < 60_000; i++) {
        logger.info({ event: 'request', id: i, pad }, 'request');
        if (dest._len > most) most = dest._len;
      }
      expect(most).toBeLessThanOrEqual(MAX_LOG_BUFFER_BYTES);
      expect(most).toBeGreaterThan(MAX_LOG_BUFFER_BYTES / 2);
      // What did not fit was dropped, and counted.
      expect(drops).toBeGreaterThan(0);
      expect(droppedLogLines(logger)).toBe(drops);
      // The collector reads again: what waited starts to drain (64 KiB a retry through this pipe).
      const waiting = dest._len;
      readAllAvailable(fd);
      await new Promise((r) => setTimeout(r, 250));
      expect(readAllAvailable(fd)).toBeGreaterThan(0);
      expect(dest._len).toBeLessThan(waiting);
    } finally {
      // Not flushed (megabytes through a 64 KiB pipe): dropped with its fd, which the destination closes.
      dest.on('error', () => {});
      await new Promise<void>((resolve) => {
        dest.once('close', () => resolve());
        dest.destroy();
      });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dropped log lines', () => {
  /**
   * A logger (made by `make` on an asynchronous destination with a 64 KiB bound, writing to a
   * FIFO nobody reads) handed to the gateway's observability; `body` overflows it and checks.
   */
  async function overflowing(
    make: (dest: pino.DestinationStream) => pino.Logger,
    body: (logger: pino.Logger, scrape: () => Promise<number | undefined>, drops: () => number) => Promise<void>,
  ): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-log-'));
    const path = join(dir, 'stdout');
    execFileSync('mkfifo', [path]);
    const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    // A small bound, so a few hundred lines overflow it (the default is MAX_LOG_BUFFER_BYTES).
    const dest = pino.destination({ dest: fd, sync: false, maxLength: 64 * 1024 });
    const logger = make(dest);
    const obs = createObservability(new EventBus(), testConfig(), { logger });
    let drops = 0;
    dest.on('drop', () => drops++);
    try {
      await body(logger, async () => sampleValue(parsePrometheusText(await obs.metrics.render()), 'switchyard_log_lines_dropped_total'), () => drops);
    } finally {
      await obs.close();
      dest.on('error', () => {});
      await new Promise<void>((resolve) => {
        dest.once('close', () => resolve());
        dest.destroy();
      });
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const flood = (logger: pino.Logger) => {
    const pad = 'x'.repeat(400);
    for (let i = 0; i < 2_000; i++) logger.info({ event: 'request', id: i, pad }, 'request');
  };

  it('are counted per destination and read on scrape as switchyard_log_lines_dropped_total', async () => {
    await overflowing(
      (dest) => createLogger({ destination: dest, level: 'info' }),
      async (logger, scrape, drops) => {
        expect(await scrape()).toBe(0);
        flood(logger);
        expect(drops()).toBeGreaterThan(1_000);
        expect(droppedLogLines(logger)).toBe(drops());
        // A child writes to its parent's destination: the same count.
        expect(droppedLogLines(logger.child({ component: 'x' }))).toBe(drops());
        expect(await scrape()).toBe(drops());
        // Read, not added up, on each scrape.
        expect(await scrape()).toBe(drops());
        // A destination that never drops (a plain stream) reads 0.
        expect(droppedLogLines(createLogger({ destination: capture().stream }))).toBe(0);
        expect(droppedLogLines(createSilentLogger())).toBe(0);
      },
    );
  });

  it("are counted for an embedder's own pino logger too, from the gateway's start", async () => {
    await overflowing(
      (dest) => pino({ level: 'info' }, dest),
      async (logger, scrape, drops) => {
        flood(logger);
        expect(drops()).toBeGreaterThan(1_000);
        expect(await scrape()).toBe(drops());
      },
    );
  });
});

interface SonicBoomLike {
  _len: number;
  destroy(): void;
  on(event: 'error' | 'drop', fn: () => void): void;
  once(event: 'close', fn: () => void): void;
}

function readAllAvailable(fd: number): number {
  return readText(fd).length;
}

function readText(fd: number): string {
  const buf = Buffer.alloc(1 << 16);
  let text = '';
  for (;;) {
    try {
      const n = readSync(fd, buf);
      if (n <= 0) return text;
      text += buf.toString('latin1', 0, n);
    } catch {
      return text; // EAGAIN: nothing more now
    }
  }
}
