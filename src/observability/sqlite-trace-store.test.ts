import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { trace } from '../../test/helpers/observability-fixtures.js';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import { SqliteTraceStore, type SqliteTraceStoreOptions } from './sqlite-trace-store.js';

const T0 = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('SqliteTraceStore', () => {
  let dir: string;
  let path: string;
  let clock: VirtualClock;
  const stores: SqliteTraceStore[] = [];
  const readers: Database.Database[] = [];

  const open = (o: Partial<SqliteTraceStoreOptions> = {}) => {
    const s = new SqliteTraceStore({ path, capacity: 100, maxAgeMs: 0, clock, flushIntervalMs: 100, batchSize: 1000, ...o });
    stores.push(s);
    return s;
  };
  /** Rows actually committed, seen from a second connection (the store's buffer is invisible to it). */
  const committed = () => {
    const db = new Database(path, { readonly: true });
    readers.push(db);
    return db.prepare('SELECT count(*) FROM traces').pluck().get() as number;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-sqlite-'));
    path = join(dir, 'nested', 'dir', 'traces.db');
    clock = new VirtualClock(T0);
  });
  afterEach(async () => {
    for (const r of readers.splice(0)) r.close();
    await Promise.all(stores.splice(0).map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the directory of its path and uses WAL', () => {
    open();
    expect(existsSync(path)).toBe(true);
    const db = new Database(path, { readonly: true });
    readers.push(db);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  });

  it('buffers adds and writes them together when the flush interval elapses', async () => {
    const s = open();
    for (let i = 0; i < 3; i++) s.add(trace({ startedAt: new Date(T0).toISOString() }));
    expect(committed()).toBe(0);
    await clock.advance(99);
    expect(committed()).toBe(0);
    await clock.advance(1);
    expect(committed()).toBe(3);
    expect(clock.pending).toBe(0); // the timer is only armed while something is buffered
  });

  it('flushes early, off the add call, when the buffer reaches batchSize', async () => {
    const s = open({ batchSize: 5 });
    for (let i = 0; i < 5; i++) s.add(trace());
    expect(committed()).toBe(0); // add itself never writes
    await tick();
    expect(committed()).toBe(5);
  });

  it('queries and gets see records still in the write buffer', () => {
    const s = open();
    const t = trace({ id: 'buffered' });
    s.add(t);
    expect(s.get('buffered')).toEqual(t);
    expect(s.query({ keyId: 'team-a' }).map((r) => r.id)).toEqual(['buffered']);
  });

  it('retention by count keeps the newest `capacity` rows', async () => {
    const s = open({ capacity: 5 });
    for (let i = 0; i < 8; i++) s.add(trace({ id: `r${i}`, startedAt: new Date(T0 + i).toISOString() }));
    await clock.advance(100);
    expect(committed()).toBe(5);
    expect(s.query({ limit: 100 }).map((t) => t.id)).toEqual(['r7', 'r6', 'r5', 'r4', 'r3']);
  });

  it('retention by age drops rows older than maxAgeMs, as time passes', async () => {
    const s = open({ maxAgeMs: HOUR });
    s.add(trace({ id: 'old', startedAt: new Date(T0 - 2 * HOUR).toISOString() }));
    s.add(trace({ id: 'recent', startedAt: new Date(T0 - 10 * 60_000).toISOString() }));
    s.add(trace({ id: 'now', startedAt: new Date(T0).toISOString() }));
    await clock.advance(100);
    expect(committed()).toBe(2);
    expect(s.get('old')).toBeUndefined();
    await clock.advance(HOUR - 60_000); // now T0+59min: `recent` is 69 min old, `now` 59 min
    expect(s.query({}).map((t) => t.id)).toEqual(['now']);
  });

  it('applies retention to what it finds on open', async () => {
    const first = open({ maxAgeMs: 0 });
    first.add(trace({ id: 'ancient', startedAt: new Date(T0 - 48 * HOUR).toISOString() }));
    first.add(trace({ id: 'fresh', startedAt: new Date(T0).toISOString() }));
    await first.close();
    open({ maxAgeMs: 24 * HOUR });
    expect(committed()).toBe(1);
  });

  it('survives close and reopen; close flushes the buffer', async () => {
    const s = open();
    const a = trace({ id: 'a', startedAt: new Date(T0).toISOString() });
    const b = trace({ id: 'b', startedAt: new Date(T0 + 1).toISOString(), fallbackUsed: true });
    s.add(a);
    await clock.advance(100);
    s.add(b); // still buffered when closing
    await s.close();
    const again = open();
    expect(again.get('a')).toEqual(a);
    expect(again.query({}).map((t) => t.id)).toEqual(['b', 'a']);
    expect(again.query({ fallbackUsed: true })).toEqual([b]);
  });

  it('after close: add is ignored, reads are empty, close is idempotent', async () => {
    const s = open();
    await s.close();
    expect(() => s.add(trace())).not.toThrow();
    expect(s.query({})).toEqual([]);
    expect(s.get('x')).toBeUndefined();
    await expect(s.close()).resolves.toBeUndefined();
  });

  it('a record that cannot be serialised is reported and skipped, the rest of its batch is kept', async () => {
    const errors: unknown[] = [];
    const s = open({ onError: (e) => errors.push(e) });
    s.add(trace({ id: 'good-1' }));
    s.add(trace({ id: 'bad', usage: { promptTokens: 1n as unknown as number, completionTokens: 0 } }));
    s.add(trace({ id: 'good-2' }));
    await clock.advance(100);
    expect(errors).toHaveLength(1);
    expect(committed()).toBe(2);
    expect(s.get('bad')).toBeUndefined();
  });
});
