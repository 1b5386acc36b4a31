/**
 * One conformance suite for every TraceStore (hono's `runTest({ newRouter })`
 * pattern): filters, newest-first order, limits, ids, capacity — identical
 * answers from the memory ring and the SQLite store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trace } from '../../test/helpers/observability-fixtures.js';
import { MemoryTraceStore } from './memory-trace-store.js';
import { SqliteTraceStore } from './sqlite-trace-store.js';
import { DEFAULT_TRACE_LIMIT, MAX_TRACE_LIMIT, type TraceStore } from './trace-store.js';

const T0 = Date.UTC(2026, 2, 1);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

export function runTraceStoreConformance(name: string, newStore: (capacity: number) => TraceStore): void {
  describe(`TraceStore conformance: ${name}`, () => {
    const open: TraceStore[] = [];
    const make = (capacity = 100) => {
      const s = newStore(capacity);
      open.push(s);
      return s;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.close()));
    });

    it('returns a stored record by id, intact, and undefined for an unknown id', () => {
      const s = make();
      const t = trace({
        id: 'abc',
        fallbackUsed: true,
        retryCount: 2,
        attempts: [
          { provider: 'openai', model: 'gpt-4o-mini', status: 429, errorType: 'rate_limited', latencyMs: 12, ttftMs: null, message: '429 rate_limited' },
          { provider: 'anthropic', model: 'claude-haiku', status: 200, errorType: null, latencyMs: 80, ttftMs: 40, resume: true },
        ],
        streamOutcome: 'resumed',
        stream: true,
      });
      s.add(t);
      expect(s.get('abc')).toEqual(t);
      expect(s.get('nope')).toBeUndefined();
    });

    it('lists newest first by startedAt, later-added first on ties', () => {
      const s = make();
      s.add(trace({ id: 'b', startedAt: at(2) }));
      s.add(trace({ id: 'c', startedAt: at(3) }));
      s.add(trace({ id: 'a', startedAt: at(1) })); // a long request that finished last
      s.add(trace({ id: 'c2', startedAt: at(3) }));
      expect(s.query({}).map((t) => t.id)).toEqual(['c2', 'c', 'b', 'a']);
    });

    it('applies each filter, and all of them together', () => {
      const s = make();
      s.add(trace({ id: '1', startedAt: at(1), fallbackUsed: false, status: 200, keyId: 'team-a' }));
      s.add(trace({ id: '2', startedAt: at(2), fallbackUsed: true, routedProvider: 'anthropic', routedModel: 'claude-haiku', deployment: 'anthropic/claude-haiku' }));
      s.add(trace({ id: '3', startedAt: at(3), model: 'smart', routedProvider: 'local', routedModel: 'llama3', keyId: 'team-b' }));
      s.add(trace({ id: '4', startedAt: at(4), status: 503, routedProvider: null, routedModel: null, deployment: null, errorCode: 'all_candidates_unavailable', keyId: null }));
      s.add(trace({ id: '5', startedAt: at(5), fallbackUsed: true, status: 503, routedProvider: null, routedModel: null, keyId: 'team-b' }));
      const ids = (f: Parameters<TraceStore['query']>[0]) => s.query(f).map((t) => t.id);

      expect(ids({ fallbackUsed: true })).toEqual(['5', '2']);
      expect(ids({ fallbackUsed: false })).toEqual(['4', '3', '1']);
      expect(ids({ routedProvider: 'anthropic' })).toEqual(['2']);
      expect(ids({ model: 'smart' })).toEqual(['3']);
      // `model` also matches the concrete model that served.
      expect(ids({ model: 'llama3' })).toEqual(['3']);
      expect(ids({ model: 'fast' })).toEqual(['5', '4', '2', '1']);
      expect(ids({ status: 503 })).toEqual(['5', '4']);
      expect(ids({ keyId: 'team-b' })).toEqual(['5', '3']);
      expect(ids({ since: T0 + 3000 })).toEqual(['5', '4', '3']); // inclusive
      expect(ids({ since: T0 + 3001 })).toEqual(['5', '4']);
      expect(ids({ fallbackUsed: true, status: 503, keyId: 'team-b', since: T0 + 5000, model: 'fast' })).toEqual(['5']);
      expect(ids({ fallbackUsed: true, routedProvider: 'local' })).toEqual([]);
    });

    it('limits: default 50, explicit, capped at 1000', () => {
      const s = make(2000);
      for (let i = 0; i < 1100; i++) s.add(trace({ id: `r${i}`, startedAt: at(i) }));
      expect(s.query({})).toHaveLength(DEFAULT_TRACE_LIMIT);
      expect(s.query({ limit: 3 }).map((t) => t.id)).toEqual(['r1099', 'r1098', 'r1097']);
      expect(s.query({ limit: 5000 })).toHaveLength(MAX_TRACE_LIMIT);
      expect(s.query({ limit: 2, since: T0 + 1098_000 }).map((t) => t.id)).toEqual(['r1099', 'r1098']);
    });

    it('keeps at most `capacity` records, the most recently added', () => {
      const s = make(5);
      for (let i = 0; i < 12; i++) s.add(trace({ id: `r${i}`, startedAt: at(i) }));
      expect(s.query({ limit: 100 }).map((t) => t.id)).toEqual(['r11', 'r10', 'r9', 'r8', 'r7']);
      expect(s.get('r6')).toBeUndefined();
      expect(s.get('r7')?.id).toBe('r7');
    });

    it('a repeated request id: both listed, get returns the later one', () => {
      const s = make();
      s.add(trace({ id: 'dup', startedAt: at(1), status: 200 }));
      s.add(trace({ id: 'dup', startedAt: at(2), status: 503 }));
      expect(s.get('dup')?.status).toBe(503);
      expect(s.query({}).map((t) => t.status)).toEqual([503, 200]);
    });
  });
}

runTraceStoreConformance('memory', (capacity) => new MemoryTraceStore(capacity));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
runTraceStoreConformance('sqlite', (capacity) => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-traces-'));
  dirs.push(dir);
  // maxAgeMs 0: age retention off here (it has its own test); records are dated 2026-03.
  return new SqliteTraceStore({ path: join(dir, 'traces.db'), capacity, maxAgeMs: 0 });
});
