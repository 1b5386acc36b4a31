/**
 * A fixed-size ring of the most recent traces, stored by column.
 *
 * Why columns: a ring of 10,000 trace objects keeps every request's record
 * (and its attempts, usage and strings) alive for seconds, so the garbage
 * collector copies each one out of the young generation and promotes it —
 * per request, the most expensive thing the gateway did after its two socket
 * writes (BENCHMARKS.md). Here a common record (at most one attempt, no
 * attempt message) becomes numbers in typed arrays and codes of interned
 * strings, its start time a number and its id (a UUID, unless the client sent
 * its own) four words: nothing of it is a heap object. Anything else (retries,
 * failures with messages, strings beyond the interner's bound) is kept as the
 * object itself; the interner is rebuilt from the live records when it fills.
 * Reads rebuild records; they serve an admin endpoint, not the request path,
 * and may scan the whole ring (a few thousand comparisons).
 */
import { ID_WORDS, type AttemptTrace, type TraceRecord } from './events.js';
import { Interner } from './interner.js';
import { isoTime, isoTimeMs } from './iso-time.js';
import { uuidToWords, wordsToUuid } from './compact-id.js';
import { matchesFilter, parseStartedAt, resolveLimit, type TraceFilter, type TraceStore } from './trace-store.js';

/** Interned string columns, per record (stride S). */
const KEY = 0, MODEL = 1, PROVIDER = 2, ROUTED_MODEL = 3, DEPLOYMENT = 4, SELECTION = 5, ERROR_CODE = 6;
const DATA_CLASS = 7, ENDPOINT = 8, OUTCOME = 9, A_PROVIDER = 10, A_MODEL = 11, A_ERROR = 12;
const S = 13;
/** Float columns (stride F); null is NaN. */
const DURATION = 0, COST = 1, TTFT = 2, OVERHEAD = 3, A_LATENCY = 4, A_TTFT = 5;
const F = 6;
/** Integer columns (stride I). */
const STATUS = 0, RETRIES = 1, PROMPT = 2, COMPLETION = 3, MALFORMED = 4, A_STATUS = 5;
const I = 6;
/** Flag bits. */
const FALLBACK = 1, STREAM = 2, RESUMED = 4, HAS_ATTEMPT = 8;

const isInt = (v: number) => (v | 0) === v;

export class MemoryTraceStore implements TraceStore {
  /** Ids that are not UUIDs (undefined: the id is in `uuids`). */
  private readonly ids: (string | undefined)[];
  private readonly uuids: Uint32Array;
  /** Start times that are not in isoTime's form (undefined: `times` has it). */
  private readonly startedAt: (string | undefined)[];
  /** Records that are not stored by column (see the file comment); undefined for columnar ones. */
  private readonly objects: (TraceRecord | undefined)[];
  /** startedAt as epoch ms, parsed when first queried (NaN: not yet). */
  private readonly times: Float64Array;
  private readonly str: Uint16Array;
  private readonly num: Float64Array;
  private readonly int: Int32Array;
  private readonly flags: Uint8Array;
  private interner = new Interner();
  /**
   * Each string column's last value and its code: consecutive records mostly repeat their
   * model, provider, deployment and key, and a comparison (the same string object, usually)
   * is cheaper than the interner's map lookup — thirteen a record. Cleared with the interner.
   */
  private readonly lastValue: (string | null | undefined)[] = new Array<string | null | undefined>(S).fill(undefined);
  private readonly lastCode = new Uint16Array(S);
  /** Records added since the interner was last rebuilt (see compact). */
  private addsSinceCompact = 0;
  /** Slot the next record goes into (holds the oldest record once full). */
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`trace capacity must be a positive integer, got ${capacity}`);
    this.ids = new Array<string | undefined>(capacity);
    this.uuids = new Uint32Array(capacity * 4);
    this.startedAt = new Array<string | undefined>(capacity);
    this.objects = new Array<TraceRecord | undefined>(capacity);
    this.times = new Float64Array(capacity);
    this.str = new Uint16Array(capacity * S);
    this.num = new Float64Array(capacity * F);
    this.int = new Int32Array(capacity * I);
    this.flags = new Uint8Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  add(t: TraceRecord): void {
    const slot = this.next;
    const words = t[ID_WORDS];
    if (words !== undefined) {
      // Made by the gateway: its words came with it.
      const u = this.uuids;
      const w = slot * 4;
      u[w] = words[0]!;
      u[w + 1] = words[1]!;
      u[w + 2] = words[2]!;
      u[w + 3] = words[3]!;
      this.ids[slot] = undefined;
    } else {
      this.ids[slot] = uuidToWords(t.id, this.uuids, slot * 4) ? undefined : t.id;
    }
    const ms = isoTimeMs(t.startedAt);
    this.startedAt[slot] = Number.isNaN(ms) ? t.startedAt : undefined;
    this.times[slot] = ms;
    // At most once per turn of the ring: O(capacity) work, a few ms at 10,000, is then O(1) a record.
    if (this.interner.full && this.addsSinceCompact >= this.capacity) this.compact();
    this.addsSinceCompact++;
    this.objects[slot] = this.encode(slot, t) ? undefined : t;
    this.next = slot + 1 === this.capacity ? 0 : slot + 1;
    if (this.count < this.capacity) this.count++;
  }

  get(id: string): TraceRecord | undefined {
    const q = new Uint32Array(4);
    const isUuid = uuidToWords(id, q, 0);
    const u = this.uuids;
    // Newest first: a repeated (client-supplied) id answers with its latest record.
    for (let k = 0, slot = this.next; k < this.count; k++) {
      slot = slot === 0 ? this.capacity - 1 : slot - 1;
      const own = this.ids[slot];
      const w = slot * 4;
      const hit = own === undefined ? isUuid && u[w] === q[0] && u[w + 1] === q[1] && u[w + 2] === q[2] && u[w + 3] === q[3] : own === id;
      if (hit) return this.record(slot);
    }
    return undefined;
  }

  query(f: TraceFilter): TraceRecord[] {
    const limit = resolveLimit(f.limit);
    const since = f.since;
    const cap = this.capacity;
    const want = this.filterCodes(f);
    const hits: number[] = [];
    let ordered = true;
    let prev = Infinity;
    // Newest added first, so the stable sort below keeps "later added first" among equal start times.
    for (let k = 0, slot = this.next; k < this.count; k++) {
      slot = slot === 0 ? cap - 1 : slot - 1;
      const at = this.time(slot);
      if (since !== undefined && at < since) continue;
      const obj = this.objects[slot];
      if (obj ? !matchesFilter(obj, f) : !this.matchesColumns(slot, f, want)) continue;
      if (at > prev) ordered = false;
      prev = at;
      hits.push(slot);
    }
    if (!ordered) hits.sort((a, b) => this.times[b]! - this.times[a]!);
    const n = Math.min(limit, hits.length);
    const out = new Array<TraceRecord>(n);
    for (let i = 0; i < n; i++) out[i] = this.record(hits[i]!);
    return out;
  }

  async close(): Promise<void> {
    this.ids.fill(undefined);
    this.startedAt.fill(undefined);
    this.objects.fill(undefined);
    this.count = 0;
    this.next = 0;
  }

  /** Write `t` into the columns of `slot`; false when it does not fit them (then the object is kept). */
  private encode(slot: number, t: TraceRecord): boolean {
    const attempts = t.attempts;
    const a: AttemptTrace | undefined = attempts.length === 1 ? attempts[0] : undefined;
    if (attempts.length > 1 || (a !== undefined && (a.message !== undefined || a.resume !== undefined))) return false;
    if (!isInt(t.status) || !isInt(t.retryCount) || !isInt(t.usage.promptTokens) || !isInt(t.usage.completionTokens) || !isInt(t.malformedEvents)) return false;
    // A NaN where null is encoded as NaN would come back as null.
    if (Number.isNaN(t.costUsd) || Number.isNaN(t.ttftMs)) return false;
    const s = slot * S;
    const ok =
      this.put(s, KEY, t.keyId) &&
      this.put(s, MODEL, t.model) &&
      this.put(s, PROVIDER, t.routedProvider) &&
      this.put(s, ROUTED_MODEL, t.routedModel) &&
      this.put(s, DEPLOYMENT, t.deployment) &&
      this.put(s, SELECTION, t.selection) &&
      this.put(s, ERROR_CODE, t.errorCode) &&
      this.put(s, DATA_CLASS, t.dataClass) &&
      this.put(s, ENDPOINT, t.endpoint) &&
      this.put(s, OUTCOME, t.streamOutcome);
    if (!ok) return false;
    const n = slot * F;
    const num = this.num;
    num[n + DURATION] = t.durationMs;
    num[n + COST] = t.costUsd ?? NaN;
    num[n + TTFT] = t.ttftMs ?? NaN;
    num[n + OVERHEAD] = t.overheadMs;
    const i = slot * I;
    const int = this.int;
    int[i + STATUS] = t.status;
    int[i + RETRIES] = t.retryCount;
    int[i + PROMPT] = t.usage.promptTokens;
    int[i + COMPLETION] = t.usage.completionTokens;
    int[i + MALFORMED] = t.malformedEvents;
    let flags = (t.fallbackUsed ? FALLBACK : 0) | (t.stream ? STREAM : 0) | (t.resumed ? RESUMED : 0);
    if (a !== undefined) {
      if (!isInt(a.status) || Number.isNaN(a.ttftMs)) return false;
      if (!this.put(s, A_PROVIDER, a.provider) || !this.put(s, A_MODEL, a.model) || !this.put(s, A_ERROR, a.errorType)) return false;
      num[n + A_LATENCY] = a.latencyMs;
      num[n + A_TTFT] = a.ttftMs ?? NaN;
      int[i + A_STATUS] = a.status;
      flags |= HAS_ATTEMPT;
    }
    this.flags[slot] = flags;
    return true;
  }

  /**
   * A fresh interner holding only the strings the columnar records still use.
   * Codes are never taken back one by one, so without this the strings of records
   * long gone from the ring held the table for good: a client cycling through
   * model names (`PROVIDER/anything`, typos) filled it once, and from then on every
   * record with a string new since was kept whole as an object — the per-request
   * garbage-collector cost the columns exist to avoid, for the rest of the run.
   */
  private compact(): void {
    const old = this.interner;
    const fresh = new Interner(old.max);
    const str = this.str;
    const cap = this.capacity;
    for (let k = 0, slot = this.next; k < this.count; k++) {
      slot = slot === 0 ? cap - 1 : slot - 1;
      // The slot about to be overwritten (the oldest, once full) keeps nothing.
      if (slot === this.next || this.objects[slot] !== undefined) continue;
      const s = slot * S;
      // Without an attempt the attempt columns hold a previous record's codes: nothing to keep.
      const used = this.flags[slot]! & HAS_ATTEMPT ? S : A_PROVIDER;
      // Never -1: the live strings are a subset of the old table, which had the same bound.
      for (let j = 0; j < used; j++) str[s + j] = fresh.code(old.string(str[s + j]!));
      for (let j = used; j < S; j++) str[s + j] = 0;
    }
    this.interner = fresh;
    this.lastValue.fill(undefined);
    this.addsSinceCompact = 0;
  }

  /** The code of `v` into string column `col` of the record at `s`; false when the interner is full. */
  private put(s: number, col: number, v: string | null): boolean {
    if (v === this.lastValue[col]) {
      this.str[s + col] = this.lastCode[col]!;
      return true;
    }
    const c = this.interner.code(v);
    if (c < 0) return false;
    this.lastValue[col] = v;
    this.lastCode[col] = c;
    this.str[s + col] = c;
    return true;
  }

  private record(slot: number): TraceRecord {
    const obj = this.objects[slot];
    if (obj) return obj;
    const s = slot * S;
    const n = slot * F;
    const i = slot * I;
    const str = (k: number) => this.interner.string(this.str[s + k]!);
    const orNull = (v: number) => (Number.isNaN(v) ? null : v);
    const flags = this.flags[slot]!;
    const attempts: AttemptTrace[] = [];
    if (flags & HAS_ATTEMPT) {
      attempts.push({
        provider: str(A_PROVIDER)!,
        model: str(A_MODEL)!,
        status: this.int[i + A_STATUS]!,
        errorType: str(A_ERROR) as AttemptTrace['errorType'],
        latencyMs: this.num[n + A_LATENCY]!,
        ttftMs: orNull(this.num[n + A_TTFT]!),
      });
    }
    // Same key order as RequestRun.finish: the JSON a client reads looks the same either way.
    return {
      id: this.ids[slot] ?? wordsToUuid(this.uuids, slot * 4),
      startedAt: this.startedAt[slot] ?? isoTime(this.times[slot]!),
      durationMs: this.num[n + DURATION]!,
      keyId: str(KEY),
      model: str(MODEL)!,
      routedProvider: str(PROVIDER),
      routedModel: str(ROUTED_MODEL),
      deployment: str(DEPLOYMENT),
      selection: str(SELECTION),
      fallbackUsed: (flags & FALLBACK) !== 0,
      retryCount: this.int[i + RETRIES]!,
      attempts,
      stream: (flags & STREAM) !== 0,
      status: this.int[i + STATUS]!,
      errorCode: str(ERROR_CODE),
      usage: { promptTokens: this.int[i + PROMPT]!, completionTokens: this.int[i + COMPLETION]! },
      costUsd: orNull(this.num[n + COST]!),
      dataClass: str(DATA_CLASS) as TraceRecord['dataClass'],
      ttftMs: orNull(this.num[n + TTFT]!),
      overheadMs: this.num[n + OVERHEAD]!,
      resumed: (flags & RESUMED) !== 0,
      streamOutcome: str(OUTCOME) as TraceRecord['streamOutcome'],
      malformedEvents: this.int[i + MALFORMED]!,
      endpoint: str(ENDPOINT) as TraceRecord['endpoint'],
    };
  }

  /** Epoch ms of a slot's start (a text not in isoTime's form parsed once); 0 for an unparsable one (sorts last, fails any `since`). */
  private time(slot: number): number {
    let ms = this.times[slot]!;
    if (Number.isNaN(ms)) this.times[slot] = ms = parseStartedAt(this.startedAt[slot]!);
    return ms;
  }

  /** The filter's strings as codes: -1 for a string no columnar record holds. */
  private filterCodes(f: TraceFilter) {
    const find = (v: string | undefined) => (v === undefined ? undefined : this.interner.find(v));
    return { provider: find(f.routedProvider), model: find(f.model), key: find(f.keyId) };
  }

  private matchesColumns(slot: number, f: TraceFilter, want: ReturnType<MemoryTraceStore['filterCodes']>): boolean {
    const s = slot * S;
    const str = this.str;
    if (f.fallbackUsed !== undefined && ((this.flags[slot]! & FALLBACK) !== 0) !== f.fallbackUsed) return false;
    if (want.provider !== undefined && str[s + PROVIDER] !== want.provider) return false;
    if (want.model !== undefined && str[s + MODEL] !== want.model && str[s + ROUTED_MODEL] !== want.model) return false;
    if (f.status !== undefined && this.int[slot * I + STATUS] !== f.status) return false;
    if (want.key !== undefined && str[s + KEY] !== want.key) return false;
    return true;
  }
}
