/**
 * One request from admission to its trace: identity, key policy, data class,
 * the candidate chain, the client-key quota, the request-level signal (client
 * gone, deadline), and the single trace emitted at the end — whatever the
 * outcome, including refusals before routing, so operators see those too.
 */
import type { Config, KeyConfig } from '../config/types.js';
import { ID_WORDS, type EventBus } from '../observability/events.js';
import { newUuid } from '../observability/compact-id.js';
import { costUsd } from '../observability/cost.js';
import { tokenCount } from '../protocol/token-count.js';
import type { KeyLimiter } from '../limits/key-limiter.js';
import type { Catalog } from '../routing/catalog.js';
import { buildChain, type Candidate, type ChainScope } from '../routing/chain.js';
import { effectiveDataClass, requiresLocal } from '../routing/privacy.js';
import type { Requirements } from '../routing/requirements.js';
import { AttemptAborted, CLIENT_GONE, DEADLINE } from '../resilience/abort.js';
import type { Lease } from '../resilience/executor.js';
import { RequestRun } from '../resilience/run.js';
import type { Clock, Random, TimerHandle } from './clock.js';
import { GatewayError } from './errors.js';
import { Cancellation, type Signal } from './signal.js';
import { REQUEST_ID_RE } from './request-meta.js';

export interface LifecycleDeps {
  config: Config;
  clock: Clock;
  random: Random;
  catalog: Catalog;
  keyLimiter: KeyLimiter;
  bus: EventBus;
  /**
   * Requests whose prompt's cheap bound reaches this are counted exactly (a real
   * tokenizer costs tens of µs); below it the bound, with the completion budget,
   * is precise enough for the configured tpm limits and is reconciled with the
   * reported usage anyway. Infinity when no tpm limit is configured.
   */
  exactTokensFrom: number;
}

export interface RequestContext {
  /** Aborts the request (client gone). */
  signal?: Signal;
  /**
   * The cheaper form for servers: the caller registers `abort`, and calls it
   * when its client leaves (saves a listener per request), or with
   * SHUTTING_DOWN when it stops serving with the request still in flight.
   */
  onClientGone?: (abort: (reason?: AttemptAborted) => void) => void;
  headers?: Record<string, string | string[] | undefined>;
  key?: KeyConfig | null;
  /** The request id, when the caller already decided it (the server: requestIdOf); else taken from `headers` or made. */
  requestId?: string;
  /**
   * Internal (the server's): `requestId`'s words, when it was made with newUuid, so
   * the trace ring stores them without parsing the text. Under a symbol the package
   * does not export: the ring trusts these words, so no library caller should set them.
   */
  [ID_WORDS]?: readonly number[];
  /** Internal (the server's): `headers` is node's, every name already lower-case (see dataClassHeader). */
  [NODE_HEADERS]?: true;
}

/** Marks a context whose headers came from node's parser: lower-case names, repeated lines joined. */
export const NODE_HEADERS: unique symbol = Symbol('switchyard.nodeHeaders');

const noop = () => {};

/** 1% of the smallest configured tpm: below that, a request's rounding error cannot matter to pacing. */
export function exactTokensThreshold(config: Config): number {
  const tpms = [
    ...config.providers.map((p) => p.tpm),
    ...config.models.flatMap((m) => m.deployments.map((d) => d.tpm)),
    ...config.keys.map((k) => k.tpm),
  ].filter((t): t is number => t !== undefined && t > 0);
  return tpms.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...tpms) / 100;
}


const header = (h: RequestContext['headers'], name: string): string | undefined => {
  const v = h?.[name];
  return Array.isArray(v) ? v[0] : v;
};

const DATA_CLASS_HEADER = 'x-switchyard-data-class';

/**
 * The data-class header as HTTP would give it. node hands the server lower-case names and
 * joins repeated lines with ", "; in-process callers pass their own objects. Read there
 * with `header` (exact name, first of a list), `X-Switchyard-Data-Class: restricted` was
 * not seen and `['public', 'restricted']` was `public`: the raise the caller asked for was
 * dropped without a word, and the request went to an external provider. So any case of the
 * name is found (a scan only when the lower-case one is absent, gated by length), and a
 * list is joined as node joins lines: one class is that class, several are a 400.
 */
function dataClassHeader(ctx: RequestContext): string | undefined {
  const h = ctx.headers;
  if (h === undefined) return undefined;
  let v = h[DATA_CLASS_HEADER];
  // node's names are lower-case already: the server's requests (nearly all without the header) skip the scan.
  if (v === undefined && ctx[NODE_HEADERS] !== true) {
    for (const name in h) {
      if (name.length === DATA_CLASS_HEADER.length && name.toLowerCase() === DATA_CLASS_HEADER) {
        v = h[name];
        break;
      }
    }
  }
  return Array.isArray(v) ? v.join(', ') : v;
}

export class RequestLifecycle {
  readonly run: RequestRun;
  readonly chain: Candidate[];
  readonly scope: ChainScope;
  readonly estimatedTokens: number;
  private readonly keyLease: Lease | undefined;
  private readonly deadline: TimerHandle;
  private readonly unlinkClient: () => void;

  /** Admit a request, or throw the contract's refusal (403, 404, 400, 429) after tracing it. */
  constructor(
    private readonly deps: LifecycleDeps,
    model: string,
    stream: boolean,
    endpoint: 'chat' | 'embeddings',
    requirements: Requirements,
    ctx: RequestContext,
    exactTokens: (model: string) => number,
  ) {
    const { config, clock } = deps;
    const key = ctx.key ?? null;
    const rid = ctx.requestId ?? header(ctx.headers, 'x-request-id');
    const now = clock.now();
    const controller = new Cancellation();
    let idWords: number[] | undefined;
    const id = rid !== undefined && (rid === ctx.requestId || REQUEST_ID_RE.test(rid)) ? rid : newUuid((idWords = []));
    this.run = new RequestRun(
      id,
      now,
      model,
      key?.id ?? null,
      key?.dataClass ?? config.privacy.defaultDataClass,
      stream,
      endpoint,
      controller,
      now + config.resilience.deadlineMs,
    );
    const given = id === ctx.requestId ? ctx[ID_WORDS] : undefined;
    this.run.idWords = idWords ?? (given?.length === 4 ? given : undefined);
    try {
      // A model that does not exist is a 404 whoever asks (buildChain says so), as the contract has it: 403 is for a model the key may not use.
      if (key?.models && !key.models.includes(model) && deps.catalog.routes(model)) {
        throw new GatewayError(403, 'model_not_allowed', `This key may not use the model '${model}'`, 'model');
      }
      this.run.dataClass = effectiveDataClass(this.run.dataClass, dataClassHeader(ctx));
      this.scope = { requirements, localOnly: requiresLocal(this.run.dataClass, key), dataClass: this.run.dataClass, key };
      this.chain = buildChain(deps.catalog, model, this.scope, deps.random);
      // Only the prompt's part is a guess worth counting; the completion budget is the client's number (or the default).
      const tokenized = requirements.promptTokens >= deps.exactTokensFrom;
      this.estimatedTokens = tokenized ? exactTokens(this.chain[0]!.deployment.model) : requirements.paceTokens;
      if (key) {
        // The request's clock reading still holds unless the tokenizer ran (tens of µs to ms on a long prompt).
        const k = deps.keyLimiter.check(key, this.estimatedTokens, tokenized ? undefined : now);
        if (!k.ok) {
          const s = Math.max(1, Math.ceil(k.retryAfterMs / 1000));
          throw new GatewayError(429, 'rate_limited', `This key's rate limit is exhausted (rpm ${key.rpm ?? '-'}, tpm ${key.tpm ?? '-'}); retry after ${s} s`, null, s);
        }
        this.keyLease = k.lease;
      }
    } catch (err) {
      // Refused without an upstream call: all of its time so far was the gateway's own.
      this.run.markResponseStart();
      this.emit(err);
      throw err;
    }
    // Called with no reason (or an EventTarget's event) when the client leaves; the server passes
    // SHUTTING_DOWN when its shutdown grace runs out with the request still in flight.
    const onClientAbort = (reason?: unknown) => controller.abort(reason instanceof AttemptAborted ? reason : CLIENT_GONE());
    ctx.onClientGone?.(onClientAbort);
    if (ctx.signal?.aborted) onClientAbort();
    else ctx.signal?.addEventListener('abort', onClientAbort, { once: true });
    this.unlinkClient = ctx.signal ? () => ctx.signal!.removeEventListener('abort', onClientAbort) : noop;
    this.deadline = clock.setTimer(() => controller.abort(DEADLINE()), config.resilience.deadlineMs);
  }

  /** A committed stream is bounded by its stall timer, not the deadline. */
  clearDeadline(): void {
    this.deadline.clear();
  }

  /**
   * The routed request failed: its error response starts now (the overhead figure is
   * frozen as for an answer), the error carries the routing facts for its headers,
   * and the request is finished.
   */
  fail(err: unknown): void {
    const run = this.run;
    run.markResponseStart();
    if (err instanceof GatewayError) err.routing = { attempts: run.upstreamAttempts(), overheadMs: run.overheadMs };
    this.finish(err);
  }

  /** The request is over: release its timers and listeners, settle the key quota, emit its one trace (`endedAt`: a `performance.now()` reading). */
  finish(err?: unknown, endedAt?: number): void {
    this.deadline.clear();
    this.unlinkClient();
    const run = this.run;
    // Refused before any call reached an upstream (all throttled, cooling or open; the deadline; every
    // upstream unreachable): nothing spent, no quota used. Attempts that were tried but never arrived
    // (connection refused) count in x-switchyard-attempts, not here.
    if (err !== undefined && !run.sent) this.keyLease?.cancel();
    // A failed request counts as a request, and its tokens as what it was answered: a stream cut
    // after its first token, what it delivered; one every upstream refused with an error, none.
    // Kept at its estimate, three 503s used a small tpm up, and the key's next request was a
    // 429 though the client had received nothing. One that may have run upstream (timed out,
    // abandoned, cut before its first token, unreadable) keeps its estimate: those were billed.
    else this.keyLease?.reconcile(run.usage?.total_tokens ?? (err !== undefined && !run.mayHaveSpent ? 0 : undefined));
    const u = run.usage;
    if (run.attemptsCostUsd !== undefined) run.costUsd = run.attemptsCostUsd === null ? null : Math.round(run.attemptsCostUsd * 1e12) / 1e12;
    else if (u) {
      const cachedTokens = tokenCount(u.prompt_tokens_details?.cached_tokens);
      const cacheWriteTokens = tokenCount(u.cache_creation_input_tokens);
      run.costUsd = costUsd(run.served?.deployment.price, { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, cachedTokens, cacheWriteTokens });
    }
    // A pinned model that answered gets a breaker and pacing of its own from now on (Catalog.servedPinned).
    if (run.served?.deployment.pinned) this.deps.catalog.servedPinned(run.served.deployment);
    this.emit(err, endedAt);
  }

  private emit(err: unknown, endedAt?: number): void {
    const run = this.run;
    if (err !== undefined) {
      if (err instanceof GatewayError) {
        run.status = err.status;
        run.errorCode = err.code;
      } else if (err instanceof AttemptAborted && err.kind === 'deadline') {
        run.status = 504;
        run.errorCode = 'timeout';
      } else if (err instanceof AttemptAborted && err.kind === 'shutdown') {
        run.status = 503;
        run.errorCode = 'shutting_down';
      } else {
        run.status = 499;
        run.errorCode = 'client_closed_request';
      }
    }
    const trace = run.finish(endedAt);
    if (trace) this.deps.bus.emit('request', trace);
  }
}
