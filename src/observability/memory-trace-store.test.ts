import { describe, expect, it } from 'vitest';
import { attempt, trace } from '../../test/helpers/observability-fixtures.js';
import { newUuid } from './compact-id.js';
import { ID_WORDS } from './events.js';
import { MemoryTraceStore } from './memory-trace-store.js';

describe('MemoryTraceStore ring', () => {
  it('evicts the oldest-added record once full and forgets its id', () => {
    const s = new MemoryTraceStore(3);
    for (const id of ['a', 'b', 'c', 'd', 'e']) s.add(trace({ id }));
    expect(s.size).toBe(3);
    expect(s.get('a')).toBeUndefined();
    expect(s.get('b')).toBeUndefined();
    expect(['c', 'd', 'e'].map((id) => s.get(id)?.id)).toEqual(['c', 'd', 'e']);
  });

  it('keeps the id index consistent across many wraps', () => {
    const s = new MemoryTraceStore(7);
    for (let i = 0; i < 10_000; i++) s.add(trace({ id: `r${i}` }));
    expect(s.query({ limit: 100 }).map((t) => t.id)).toEqual(['r9999', 'r9998', 'r9997', 'r9996', 'r9995', 'r9994', 'r9993']);
    for (let i = 9993; i < 10_000; i++) expect(s.get(`r${i}`)?.id).toBe(`r${i}`);
    for (let i = 0; i < 9993; i += 97) expect(s.get(`r${i}`)).toBeUndefined();
  });

  it('evicting an older record never drops the index entry of a newer one with the same id', () => {
    const s = new MemoryTraceStore(2);
    const first = trace({ id: 'x', status: 200 });
    const second = trace({ id: 'x', status: 500 });
    s.add(first);
    s.add(second);
    expect(s.get('x')).toEqual(second);
    s.add(trace({ id: 'y' })); // evicts `first`, while `second` (same id) stays
    expect(s.get('x')).toEqual(second);
    s.add(trace({ id: 'z' })); // evicts `second`
    expect(s.get('x')).toBeUndefined();
  });

  it('sorts only when records arrived out of start order', () => {
    const s = new MemoryTraceStore(10);
    const base = Date.UTC(2026, 0, 1);
    for (const [id, sec] of [['late-finisher', 1], ['b', 3], ['c', 2]] as const) {
      s.add(trace({ id, startedAt: new Date(base + sec * 1000).toISOString() }));
    }
    expect(s.query({}).map((t) => t.id)).toEqual(['b', 'c', 'late-finisher']);
  });

  it('gives back ids and start times exactly, whether kept as numbers (UUIDs, canonical times) or as text', () => {
    const s = new MemoryTraceStore(8);
    const records = [
      trace({ id: '0123abcd-4567-89ef-0123-456789abcdef', startedAt: '2026-11-30T05:00:00.007Z' }),
      trace({ id: '0123ABCD-4567-89EF-0123-456789ABCDEF', startedAt: '2026-11-30T05:00:00.7Z' }),
      trace({ id: 'client-chosen-id', startedAt: '2026-11-30T05:00:01.000+00:00' }),
      trace({ id: 'ffffffff-ffff-ffff-ffff-ffffffffffff', startedAt: 'not a time' }),
    ];
    for (const r of records) s.add(r);
    for (const r of records) expect(s.get(r.id)).toEqual(r);
    expect(s.get('0123abcd-4567-89ef-0123-456789abcdee')).toBeUndefined();
    expect(s.query({ limit: 10 }).map((t) => [t.id, t.startedAt])).toEqual([
      ['client-chosen-id', '2026-11-30T05:00:01.000+00:00'],
      ['0123ABCD-4567-89EF-0123-456789ABCDEF', '2026-11-30T05:00:00.7Z'],
      ['0123abcd-4567-89ef-0123-456789abcdef', '2026-11-30T05:00:00.007Z'],
      ['ffffffff-ffff-ffff-ffff-ffffffffffff', 'not a time'],
    ]);
    expect(s.query({ since: Date.parse('2026-11-30T05:00:00.500Z'), limit: 10 }).map((t) => t.id)).toEqual(['client-chosen-id', '0123ABCD-4567-89EF-0123-456789ABCDEF']);
  });

  it('stores a made id by the words that came with it, and finds it by its text', () => {
    const s = new MemoryTraceStore(4);
    const words: number[] = [];
    const id = newUuid(words);
    s.add({ ...trace({ id }), [ID_WORDS]: words });
    expect(s.get(id)?.id).toBe(id);
    expect(s.query({ limit: 1 })[0]!.id).toBe(id);
  });

  it('gives each record its own strings when consecutive records repeat, alternate and mix them across columns', () => {
    const s = new MemoryTraceStore(16);
    const made = ['a', 'b', 'a', 'a', 'c', 'b'].map((d, i) =>
      trace({ id: `mix-${i}`, deployment: `p/${d}`, routedModel: d, selection: i % 2 ? 'weighted' : `weighted, rank ${i}`, keyId: i === 3 ? null : 'team-a', model: d === 'a' ? 'p/b' : 'fast' }),
    );
    for (const t of made) s.add(t);
    for (const t of made) expect(s.get(t.id)).toEqual(t);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new MemoryTraceStore(0)).toThrow(RangeError);
    expect(() => new MemoryTraceStore(1.5)).toThrow(RangeError);
  });

  it('close empties it', async () => {
    const s = new MemoryTraceStore(3);
    s.add(trace({ id: 'a' }));
    await s.close();
    expect(s.get('a')).toBeUndefined();
    expect(s.query({})).toEqual([]);
  });

  it('gives back every field of a record stored by column, nulls and flags included', () => {
    const s = new MemoryTraceStore(4);
    const plain = trace({ id: 'p', keyId: null, costUsd: null, ttftMs: null, attempts: [attempt({ ttftMs: null })] });
    const streamed = trace({
      id: 's',
      stream: true,
      resumed: true,
      fallbackUsed: true,
      streamOutcome: 'resumed',
      ttftMs: 41.5,
      costUsd: 0.000123,
      selection: 'least-latency',
      usage: { promptTokens: 1_000_000, completionTokens: 7 },
      attempts: [attempt({ provider: 'anthropic', model: 'claude-haiku', ttftMs: 40.25, latencyMs: 812.125 })],
    });
    const refused = trace({ id: 'r', status: 429, errorCode: 'rate_limited', routedProvider: null, routedModel: null, deployment: null, selection: null, attempts: [] });
    for (const t of [plain, streamed, refused]) s.add(t);
    expect(s.get('p')).toEqual(plain);
    expect(s.get('s')).toEqual(streamed);
    expect(s.get('r')).toEqual(refused);
    // The JSON a client reads has the same keys in the same order.
    expect(JSON.stringify(s.get('s'))).toBe(JSON.stringify(streamed));
  });

  it('keeps records that do not fit the columns (retries, messages, odd numbers) as they are', () => {
    const s = new MemoryTraceStore(4);
    const retried = trace({ id: 'a', retryCount: 1, attempts: [attempt({ status: 503, errorType: 'server', message: 'server (503)' }), attempt()] });
    const resumed = trace({ id: 'b', attempts: [attempt({ resume: true })] });
    const fractional = trace({ id: 'c', status: 200.5 });
    for (const t of [retried, resumed, fractional]) s.add(t);
    expect(s.get('a')).toBe(retried);
    expect(s.get('b')).toBe(resumed);
    expect(s.get('c')).toBe(fractional);
    expect(s.query({ status: 200.5 }).map((t) => t.id)).toEqual(['c']);
  });

  it('bounds the strings it interns: past the bound, records with new strings are kept whole and still found', () => {
    const s = new MemoryTraceStore(5000);
    for (let i = 0; i < 4200; i++) s.add(trace({ id: `m${i}`, model: `client-model-${i}`, status: 404 }));
    expect(s.get('m4199')?.model).toBe('client-model-4199');
    expect(s.get('m10')?.model).toBe('client-model-10');
    expect(s.query({ model: 'client-model-4150' }).map((t) => t.id)).toEqual(['m4150']);
    expect(s.query({ model: 'client-model-7' }).map((t) => t.id)).toEqual(['m7']);
    expect(s.query({ status: 404, limit: 1000 })).toHaveLength(1000);
  });

  it('reads a repeated string back as itself across a rebuild of the interner, whose codes differ', () => {
    // The first record has no key: every later one has a new key ahead of the strings they all
    // repeat, so the rebuilt table codes those repeated strings one place on from the first.
    const s = new MemoryTraceStore(10);
    s.add(trace({ id: 'first', keyId: null }));
    const added = [];
    for (let i = 0; i < 5_000; i++) added.push(trace({ id: `k${i}`, keyId: `key-${i}` }));
    for (const t of added) s.add(t);
    expect(s.query({ limit: 100 })).toEqual(added.slice(-10).reverse());
  });

  it('takes new strings by column again once the records that filled the interner have left the ring', () => {
    // A client cycling through model names (PROVIDER/anything, typos): 10,000 distinct strings.
    const s = new MemoryTraceStore(100);
    const added = [];
    for (let i = 0; i < 10_000; i++) added.push(trace({ id: `junk-${i}`, model: `up/junk-${i}`, routedModel: `junk-${i}` }));
    for (const t of added) s.add(t);
    // A record naming a model never seen before, long after the junk left the ring:
    const late = trace({ id: 'late', model: 'openai/gpt-5-new' });
    s.add(late);
    const back = s.get('late')!;
    expect(back).toEqual(late);
    expect(back).not.toBe(late); // rebuilt from the columns, not the record kept whole
    // Every record the ring still holds reads back as it was added, across the rebuilds.
    expect(s.query({ limit: 1000 })).toEqual([late, ...added.slice(-99).reverse()]);
    expect(s.query({ model: 'up/junk-9950' }).map((t) => t.id)).toEqual(['junk-9950']);
    expect(s.query({ model: 'junk-9990' }).map((t) => t.id)).toEqual(['junk-9990']);
    expect(s.query({ model: 'up/junk-10' })).toEqual([]);
  });
});
