/**
 * Named events at fixed points of a request's life, decoupled from whoever
 * listens (traces, metrics, logs). Emitting is a loop over an array of
 * listeners: cheap, synchronous, and listeners must only buffer — stores and
 * exporters do their real work off the hot path.
 */
import type { ErrorCategory } from '../resilience/upstream-error.js';
import type { DataClass } from '../config/types.js';

export interface AttemptTrace {
  provider: string;
  model: string;
  /** HTTP status the upstream answered; 0 when none (network, timeout before headers, local skip). */
  status: number;
  /** Normalized category of a failed attempt; null on success. */
  /** `aborted`: the client left while this attempt's call was out (the call counts as made). */
  errorType: ErrorCategory | 'throttled' | 'cooldown' | 'circuit_open' | 'skipped' | 'aborted' | null;
  latencyMs: number;
  /** Streams: time to first content token of this attempt; null otherwise. */
  ttftMs: number | null;
  /** Short reason made by the gateway (category, status, provider code): never the upstream's own text, which may echo the prompt or a key. */
  message?: string;
  /** This attempt continued a cut stream via assistant prefill. */
  resume?: boolean;
}

/** Attempt outcomes of candidates passed over without an upstream call: in attempts[], not in x-switchyard-attempts. */
export const PASSED_OVER: ReadonlySet<AttemptTrace['errorType']> = new Set<AttemptTrace['errorType']>(['throttled', 'cooldown', 'circuit_open', 'skipped']);

/** Upstream attempts made (the count x-switchyard-attempts reports): attempts[] without the candidates passed over. */
export function upstreamAttempts(attempts: readonly AttemptTrace[]): number {
  let n = 0;
  for (let i = 0; i < attempts.length; i++) {
    const e = attempts[i]!.errorType;
    // A success (null) needs no lookup: the common case, on every request's headers and trace.
    if (e === null || !PASSED_OVER.has(e)) n++;
  }
  return n;
}

export type StreamOutcome =
  | 'completed' // finished normally
  | 'resumed' // cut, then continued and finished
  | 'failed_before_commit' // every candidate failed before the first token
  | 'broken' // cut after commit and could not be resumed: error event sent
  | 'client_aborted'; // client went away

/**
 * On a trace record whose id the gateway made (newUuid): the id's four 32-bit
 * words, so the trace ring stores them without parsing the text. A symbol key
 * the package does not export: JSON.stringify and pino skip it, so it is not in
 * any trace the API serves or any log line; deep-equality helpers (vitest's
 * toEqual, assert.deepStrictEqual) and object spread do see it. Every record
 * carries the key (undefined for ids the gateway did not make), so all records
 * share one shape.
 */
export const ID_WORDS: unique symbol = Symbol('switchyard.idWords');

export interface TraceRecord {
  id: string;
  [ID_WORDS]?: readonly number[];
  /** ISO 8601. */
  startedAt: string;
  durationMs: number;
  keyId: string | null;
  /** What the client asked for: alias, `auto`, or `PROVIDER/MODEL`. */
  model: string;
  routedProvider: string | null;
  routedModel: string | null;
  /** `PROVIDER/MODEL` that served, or null when none did. */
  deployment: string | null;
  selection: string | null;
  fallbackUsed: boolean;
  /** Attempts beyond the first. */
  retryCount: number;
  attempts: AttemptTrace[];
  stream: boolean;
  /** HTTP status returned to the client (200 for a stream that started, even if it later broke). */
  status: number;
  /** Error code sent to the client, when the request failed. */
  errorCode: string | null;
  usage: { promptTokens: number; completionTokens: number };
  costUsd: number | null;
  dataClass: DataClass;
  ttftMs: number | null;
  overheadMs: number;
  resumed: boolean;
  streamOutcome: StreamOutcome | null;
  malformedEvents: number;
  endpoint: 'chat' | 'embeddings';
}

export interface BreakerEvent {
  deployment: string;
  from: 'closed' | 'open' | 'half_open';
  to: 'closed' | 'open' | 'half_open';
  at: number;
}

export interface CooldownEvent {
  deployment: string;
  untilMs: number;
  reason: ErrorCategory;
}

export interface ThrottleEvent {
  deployment: string;
  waitedMs: number;
  outcome: 'acquired' | 'skipped' | 'timed_out' | 'beyond_budget' | 'overflow' | 'aborted';
}

/** One attempt's tokens (reported, or counted when it reported none) and their cost at its deployment's price (null: unpriced). */
export interface AttemptUsage {
  promptTokens: number;
  completionTokens: number;
  costUsd: number | null;
}

/**
 * A routed request refused before it was routed: a missing or wrong key (401), a body
 * over the bound (413), malformed JSON or invalid fields (400). It has no trace (no
 * routing decision to explain, and a client without a key must not be able to push
 * real traces out of the store); it is counted and logged.
 */
export interface RefusedEvent {
  requestId: string;
  endpoint: 'chat' | 'embeddings';
  status: number;
  errorCode: string;
  /** Null when the key was missing or wrong. */
  keyId: string | null;
  /** The `model` the body named, when it was read that far. */
  model: string | null;
}

export interface GatewayEventMap {
  /** One per upstream attempt (and per candidate skipped without a call). */
  attempt: { requestId: string; alias: string; deployment: string; trace: AttemptTrace; fallback: boolean };
  /**
   * A committed stream's attempt is over (the first, and each resume's continuation): what it
   * spent, credited to its own deployment (a resume may continue on another one). Once per
   * attempt, never per chunk. A stream's request event carries the sum, for the trace.
   */
  attemptUsage: { requestId: string; deployment: string; usage: AttemptUsage };
  /** One per request, when it is finished (stream included). */
  request: TraceRecord;
  /** One per request refused before routing (see RefusedEvent). */
  refused: RefusedEvent;
  breaker: BreakerEvent;
  cooldown: CooldownEvent;
  throttle: ThrottleEvent;
  /** State store degraded / recovered (redis backend). */
  state: { backend: string; healthy: boolean; message?: string };
}

type Listener<T> = (payload: T) => void;

export class EventBus {
  private readonly listeners: { [K in keyof GatewayEventMap]?: Listener<GatewayEventMap[K]>[] } = {};

  on<K extends keyof GatewayEventMap>(name: K, fn: Listener<GatewayEventMap[K]>): () => void {
    const list = (this.listeners[name] ??= []) as Listener<GatewayEventMap[K]>[];
    list.push(fn);
    return () => {
      const i = list.indexOf(fn);
      if (i !== -1) list.splice(i, 1);
    };
  }

  has(name: keyof GatewayEventMap): boolean {
    return (this.listeners[name]?.length ?? 0) > 0;
  }

  emit<K extends keyof GatewayEventMap>(name: K, payload: GatewayEventMap[K]): void {
    const list = this.listeners[name] as Listener<GatewayEventMap[K]>[] | undefined;
    if (!list) return;
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]!(payload);
      } catch {
        // A broken listener must never break a request.
      }
    }
  }
}
