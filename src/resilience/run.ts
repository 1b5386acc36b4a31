/**
 * The mutable record of one request while it runs; it becomes the trace.
 * Created by core, filled by the executor, finished once (`finish`).
 */
import { performance } from 'node:perf_hooks';
import type { DataClass } from '../config/types.js';
import { ID_WORDS, upstreamAttempts, type AttemptTrace, type StreamOutcome, type TraceRecord } from '../observability/events.js';
import type { Candidate } from '../routing/chain.js';
import type { Usage } from '../protocol/openai.js';
import type { Signal } from '../core/signal.js';
import { isoTime } from '../observability/iso-time.js';


export class RequestRun {
  readonly attempts: AttemptTrace[] = [];
  readonly t0 = performance.now();
  /** Time spent waiting on upstreams, backoff and throttles: excluded from overhead. */
  waitedMs = 0;
  served: Candidate | undefined;
  fallbackUsed = false;
  usage: Usage | undefined;
  costUsd: number | null = null;
  /**
   * A stream's cost summed attempt by attempt, each at its deployment's price (null: one
   * had no price); undefined when nothing was priced so (a buffered answer: one attempt).
   */
  attemptsCostUsd: number | null | undefined = undefined;
  ttftMs: number | null = null;
  resumed = false;
  streamOutcome: StreamOutcome | null = null;
  malformedEvents = 0;
  /**
   * An attempt failed in a way that may have let its upstream generate (and bill) tokens:
   * timed out, cut, unreadable, or abandoned while out. An answer with an error status
   * generated nothing. A failed request's key quota keeps its estimate when this is set.
   */
  mayHaveSpent = false;
  /**
   * An attempt reached an upstream (answered, timed out, cut, or abandoned while out): the
   * request counts against its client key. One refused before any did (no candidate, all
   * throttled or cooling, an unreachable upstream, a request no adapter could express) does not.
   */
  sent = false;
  status = 200;
  errorCode: string | null = null;
  /** Gateway time up to the response head (or the stream's commit point). */
  overheadMs = 0;
  /** `id`'s words when the gateway made it (see ID_WORDS). */
  idWords: readonly number[] | undefined = undefined;
  private done = false;

  constructor(
    readonly id: string,
    readonly startedAt: number,
    readonly model: string,
    readonly keyId: string | null,
    /** The key's floor until the request's header is read (it may raise it). */
    public dataClass: DataClass,
    readonly stream: boolean,
    readonly endpoint: 'chat' | 'embeddings',
    /** Request-level signal: client gone or deadline. */
    readonly signal: Signal,
    /** Mutable: a stream resume after commit gets a fresh deadline. */
    public deadlineAt: number,
  ) {}

  /** Freeze the overhead figure: now (a `performance.now()` reading) minus the time spent waiting on others. */
  markResponseStart(now = performance.now()): number {
    this.overheadMs = Math.max(0, now - this.t0 - this.waitedMs);
    return this.overheadMs;
  }

  addAttemptCost(cost: number | null): void {
    this.attemptsCostUsd = cost === null || this.attemptsCostUsd === null ? null : (this.attemptsCostUsd ?? 0) + cost;
  }

  /** Attempts that called an upstream (candidates skipped without a call are not attempts). */
  upstreamAttempts(): number {
    return upstreamAttempts(this.attempts);
  }

  /** Returns the trace once; later calls return undefined (a request is recorded once). `endedAt`: a `performance.now()` reading. */
  finish(endedAt = performance.now()): TraceRecord | undefined {
    if (this.done) return undefined;
    this.done = true;
    const d = this.served?.deployment;
    return {
      id: this.id,
      [ID_WORDS]: this.idWords,
      startedAt: isoTime(this.startedAt),
      durationMs: Math.round((endedAt - this.t0) * 1000) / 1000,
      keyId: this.keyId,
      model: this.model,
      routedProvider: d ? d.provider.id : null,
      routedModel: d ? d.model : null,
      deployment: d ? d.key : null,
      selection: this.served?.selection ?? null,
      fallbackUsed: this.fallbackUsed,
      retryCount: Math.max(0, this.upstreamAttempts() - 1),
      attempts: this.attempts,
      stream: this.stream,
      status: this.status,
      errorCode: this.errorCode,
      usage: { promptTokens: this.usage?.prompt_tokens ?? 0, completionTokens: this.usage?.completion_tokens ?? 0 },
      costUsd: this.costUsd,
      dataClass: this.dataClass,
      ttftMs: this.ttftMs,
      overheadMs: Math.round(this.overheadMs * 1000) / 1000,
      resumed: this.resumed,
      streamOutcome: this.streamOutcome,
      malformedEvents: this.malformedEvents,
      endpoint: this.endpoint,
    };
  }
}
