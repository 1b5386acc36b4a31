/**
 * A fixed-size ring of the most recent traces: O(1) add with no allocation
 * beyond the record itself, an id index kept consistent with eviction. Queries
 * scan the ring (bounded by its capacity) — they serve an admin endpoint, not
 * the request path.
 */
import type { TraceRecord } from './events.js';
import { matchesFilter, resolveLimit, startedAtMs, type TraceFilter, type TraceStore } from './trace-store.js';

export class MemoryTraceStore implements TraceStore {
  private readonly records: (TraceRecord | undefined)[];
  /** startedAt as epoch ms, parsed once per record. */
  private readonly times: Float64Array;
  private readonly byId = new Map<string, TraceRecord>();
  /** Slot the next record goes into (holds the oldest record once full). */
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`trace capacity must be a positive integer, got ${capacity}`);
    this.records = new Array<TraceRecord | undefined>(capacity);
    this.times = new Float64Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  add(t: TraceRecord): void {
    const slot = this.next;
    const evicted = this.records[slot];
    // Only drop the index entry if it still points at the evicted record: a
    // later record with the same (client-supplied) id owns it now.
    if (evicted !== undefined && this.byId.get(evicted.id) === evicted) this.byId.delete(evicted.id);
    this.records[slot] = t;
    this.times[slot] = startedAtMs(t);
    this.byId.set(t.id, t);
    this.next = slot + 1 === this.capacity ? 0 : slot + 1;
    if (this.count < this.capacity) this.count++;
  }

  get(id: string): TraceRecord | undefined {
    return this.byId.get(id);
  }

  query(f: TraceFilter): TraceRecord[] {
    const limit = resolveLimit(f.limit);
    const since = f.since;
    const cap = this.capacity;
    const hits: number[] = [];
    let ordered = true;
    let prev = Infinity;
    // Newest added first, so the stable sort below keeps "later added first" among equal start times.
    for (let k = 0, slot = this.next; k < this.count; k++) {
      slot = slot === 0 ? cap - 1 : slot - 1;
      const t = this.records[slot]!;
      const at = this.times[slot]!;
      if (since !== undefined && at < since) continue;
      if (!matchesFilter(t, f)) continue;
      if (at > prev) ordered = false;
      prev = at;
      hits.push(slot);
    }
    if (!ordered) hits.sort((a, b) => this.times[b]! - this.times[a]!);
    const n = Math.min(limit, hits.length);
    const out = new Array<TraceRecord>(n);
    for (let i = 0; i < n; i++) out[i] = this.records[hits[i]!]!;
    return out;
  }

  async close(): Promise<void> {
    this.records.fill(undefined);
    this.byId.clear();
    this.count = 0;
    this.next = 0;
  }
}
