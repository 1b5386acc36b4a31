import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig, trace } from '../../test/helpers/observability-fixtures.js';
import { parsePrometheusText, sampleValue } from '../../test/helpers/prom-parse.js';
import { createObservability } from './create-observability.js';
import { EventBus } from './events.js';
import { createLogger } from './logger.js';
import { MemoryTraceStore } from './memory-trace-store.js';
import { SqliteTraceStore } from './sqlite-trace-store.js';

const tick = () => new Promise<void>((r) => setImmediate(r));

function capturedLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, logger: createLogger({ destination: stream, level: 'info' }) };
}

describe('createObservability', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('memory: a request event reaches the trace store, the metrics and the log', async () => {
    const bus = new EventBus();
    const { lines, logger } = capturedLogger();
    const obs = createObservability(bus, testConfig({ store: 'memory', capacity: 10 }), { logger });
    expect(obs.traces).toBeInstanceOf(MemoryTraceStore);

    bus.emit('request', trace({ id: 'one' }));
    expect(obs.traces.get('one')?.id).toBe('one');
    const exp = parsePrometheusText(await obs.metrics.render());
    expect(sampleValue(exp, 'switchyard_requests_total', { model: 'fast', endpoint: 'chat', code: '200' })).toBe(1);
    await tick();
    expect(lines.map((l) => JSON.parse(l).id)).toEqual(['one']);

    await obs.close();
    expect(bus.has('request')).toBe(false);
    expect(bus.has('attempt')).toBe(false);
    expect(bus.has('breaker')).toBe(false);
    await expect(obs.close()).resolves.toBeUndefined();
  });

  it('sqlite: picks the store from config, and close() flushes it to disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-obs-'));
    dirs.push(dir);
    const path = join(dir, 'data', 'traces.db');
    const bus = new EventBus();
    const obs = createObservability(bus, testConfig({ store: 'sqlite', path, capacity: 100, maxAgeMs: 0 }), {
      logger: capturedLogger().logger,
    });
    expect(obs.traces).toBeInstanceOf(SqliteTraceStore);
    bus.emit('request', trace({ id: 'persisted', status: 503 }));
    expect(obs.traces.query({ status: 503 }).map((t) => t.id)).toEqual(['persisted']);
    bus.emit('request', trace({ id: 'buffered-at-close' }));
    await obs.close();

    const reopened = new SqliteTraceStore({ path, capacity: 100, maxAgeMs: 0 });
    expect(reopened.get('persisted')?.status).toBe(503);
    expect(reopened.get('buffered-at-close')).toBeDefined();
    await reopened.close();
  });
});
