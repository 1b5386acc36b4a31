import { describe, expect, it } from 'vitest';
import { trace } from '../../test/helpers/observability-fixtures.js';
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
    expect(s.get('x')).toBe(second);
    s.add(trace({ id: 'y' })); // evicts `first`, while `second` (same id) stays
    expect(s.get('x')).toBe(second);
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
});
