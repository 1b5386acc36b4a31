/**
 * Runs a candidate chain: for each candidate, admission (breaker, cooldown,
 * pacing), the attempt through its adapter, classification of the outcome,
 * bookkeeping (breaker, cooldown, trace), and the decision — return, retry,
 * next candidate, or stop. One loop for buffered and streamed requests: a
 * stream's attempt "succeeds" at its commit point (first content token), so
 * everything before that fails over exactly like a buffered call.
 */
import { performance } from 'node:perf_hooks';
import type { Config } from '../config/types.js';
import type { Clock, Random } from '../core/clock.js';
import type { GatewayError } from '../core/errors.js';
import type { AttemptTrace, AttemptUsage, EventBus } from '../observability/events.js';
import type { Candidate } from '../routing/chain.js';
import type { Deployment } from '../routing/deployment.js';
import type { ProviderAdapter } from '../providers/types.js';
import { AttemptAborted } from './abort.js';
import { AttemptScope } from './attempt-scope.js';
import type { Health } from './health.js';
import {
  allNotFound,
  allRefused,
  asAnswer,
  clientErrorFor,
  deadlineError,
  exhaustedError,
  internalFault,
  isProgrammingError,
  ModelNotFoundError,
  normalizeFailure,
  RefusedAfterWait,
  type FailureNote,
} from './outcome.js';
import { decide } from './policy.js';
import type { RequestRun } from './run.js';
import { UpstreamError } from './upstream-error.js';
import { withoutRetryAfter } from '../protocol/retry-after.js';

/** Capacity check before a call (limits/ plugs in here). */
export interface CapacityGate {
  /**
   * `now`: the executor's clock reading for this attempt (the gate need not read the clock again).
   * `calls`: the upstream calls the attempt makes (an embeddings request split into batches; default 1).
   */
  acquire(d: Deployment, run: RequestRun, estimatedTokens: number, now?: number, calls?: number): { ok: true; lease: Lease } | { ok: false; retryAt: number };
  /** Nothing goes to `d` before `until` (epoch ms): an upstream's short rate-limit wait, held as pacing. */
  hold?(d: Deployment, until: number): void;
  /** Wait for the earliest of `candidates` to have capacity, bounded by the gate's own limits. */
  wait?(
    candidates: readonly Candidate[],
    run: RequestRun,
    estimatedTokens: number,
    callsFor?: (d: Deployment) => number,
  ): Promise<{ candidate: Candidate; lease: Lease } | { retryAt: number }>;
}

/** Capacity taken for one attempt: `reconcile` once the request was sent, `cancel` if it never was. */
export interface Lease {
  reconcile(actualTokens?: number, headers?: Record<string, string | string[] | undefined>): void;
  /** The answer's head arrived (a stream's): learn the upstream's rate-limit headers now, not when it ends. */
  learn(headers: Record<string, string | string[] | undefined>): void;
  cancel(): void;
}

export interface ExecutorDeps {
  config: Config;
  clock: Clock;
  random: Random;
  health: Health;
  bus: EventBus;
  adapterFor(d: Deployment): ProviderAdapter;
  gate?: CapacityGate;
}

/** What an attempt function gets: the candidate, its adapter, and the attempt's abort scope. */
export interface AttemptInput {
  candidate: Candidate;
  adapter: ProviderAdapter;
  scope: AttemptScope;
  /** ms left before the request's deadline. */
  remainingMs: number;
  trace: AttemptTrace;
  requestId: string;
  /** The attempt's capacity (none without pacing): a stream's head teaches it the upstream's limits (`learn`). */
  lease: Lease | undefined;
}

export interface Attempted<T> {
  value: T;
  candidate: Candidate;
  scope: AttemptScope;
  lease: Lease | undefined;
  /** The attempt's trace entry (a stream's keeps changing until the attempt ends: see `attemptEnded`). */
  trace: AttemptTrace;
}

export interface ChainOptions {
  estimatedTokens: number;
  /** Candidates tried after `refused` refused on content policy (the alias's contentPolicyFallbacks; for auto, its tier's). */
  contentPolicyChain?: (refused: Candidate) => Candidate[];
  /**
   * Keep the scope alive after success (streams): the caller disposes it, and
   * reports the attempt's end (`attemptEnded`) — a stream that breaks after its
   * commit point is a failed attempt, not the success it looked like then.
   */
  keepScope?: boolean;
  /** Internal: capacity already reserved (after a wait) for the chain's only candidate. */
  reserved?: Lease;
  /** Internal: the waits for capacity this request already made (none when absent); see MAX_WAITS. */
  waits?: number;
  /** Stream resume: a candidate that rejects the request is skipped, not the answer. */
  failFastAsFailover?: boolean;
  /** Upstream calls an attempt on `d` makes, when not one (embeddings sent in batches): pacing counts each. */
  callsFor?: (d: Deployment) => number;
}

const SKIP_LABEL = { cooldown: 'cooling down', circuit_open: 'circuit open', throttled: 'throttled' } as const;

/**
 * Waits for capacity one request makes at most. A wait can end in another short 429 (the
 * upstream's window was fuller than our pacing knew) and that is worth waiting out again: a
 * free tier's limit should not reach the client as a 503 while its deadline leaves time. But
 * an upstream that answers every request so (a limit shared with other clients, a window it
 * never reports) would keep the request waiting and asking each second until its deadline:
 * the cap ends that with a 503 and Retry-After. Each wait is bounded by throttleMaxWaitMs and
 * the deadline on its own (limits/gate.ts).
 */
const MAX_WAITS = 3;

export class Executor {
  constructor(private readonly deps: ExecutorDeps) {}

  async run<T>(run: RequestRun, chain: Candidate[], attempt: (input: AttemptInput) => Promise<T>, opts: ChainOptions): Promise<Attempted<T>> {
    const { clock, health, config, random } = this.deps;
    const cfg = config.resilience;
    const notes: FailureNote[] = [];
    let retryAt = Number.POSITIVE_INFINITY;
    /** The throttled candidates' earliest capacity as seen when they were skipped: superseded by a wait's own answer. */
    let throttledRetryAt = Number.POSITIVE_INFINITY;
    let candidates = chain;
    let contextFloor: { model: string; window: number } | undefined;
    let contextError: UpstreamError | undefined;
    const throttled: Candidate[] = [];
    let reserved = opts.reserved;
    /** Set once the alias's contentPolicyFallbacks were entered: a further refusal moves on within them, never back to their start. */
    let policyError: UpstreamError | undefined;
    /**
     * The first refusal of the request by one candidate only (an adapter that could not express it,
     * a model that does not take one of its parameters): the answer if every candidate's last word
     * was such a refusal (notes marked `refused`).
     */
    let refusedHere: UpstreamError | undefined;
    /** The latest 404: the answer when every candidate's model turned out missing. */
    let notFound: UpstreamError | undefined;

    for (let ci = 0; ci < candidates.length; ci++) {
      const cand = candidates[ci]!;
      const d = cand.deployment;
      if (contextFloor && (d.model === contextFloor.model || (d.contextWindow !== undefined && d.contextWindow <= contextFloor.window))) continue;
      let retries = 0;
      let waitedOwnCooldown = false;
      /** When this candidate is expected back, as its latest outcome says (a breaker its retry opened supersedes the first failure's hint). */
      let candidateRetryAt = Number.POSITIVE_INFINITY;
      let skippedThrottled = false;
      /** The adapter learnt from a refusal how to send the request to this model (at most once a candidate). */
      let adapted = false;
      for (;;) {
        // One clock read for the deadline check, admission, pacing and the attempt's time budget (each is ~70 ns).
        const now = clock.now();
        if (run.signal.aborted || now >= run.deadlineAt) {
          reserved?.cancel();
          throw run.signal.aborted ? asAnswer(run.signal.reason) : deadlineError();
        }
        const admission = health.admit(d.stateKey, waitedOwnCooldown, now);
        waitedOwnCooldown = false;
        if (!admission.ok) {
          this.skip(run, cand, admission.reason);
          if (admission.missingModel === undefined) notes.push({ deployment: d.key, label: SKIP_LABEL[admission.reason] });
          else {
            // Cooling down from a 404: still that deployment's last word on the model.
            notFound = new UpstreamError({ category: 'not_found', status: 404, message: admission.missingModel });
            notes.push({ deployment: d.key, label: `${SKIP_LABEL.cooldown} (404 not_found)`, notFound: true });
          }
          candidateRetryAt = admission.retryAt;
          break;
        }
        let lease: Lease | undefined = reserved;
        reserved = undefined;
        if (this.deps.gate && !lease) {
          const cap = opts.callsFor
            ? this.deps.gate.acquire(d, run, opts.estimatedTokens, now, opts.callsFor(d))
            : this.deps.gate.acquire(d, run, opts.estimatedTokens, now);
          if (!cap.ok) {
            health.release(d.stateKey, admission.probe);
            this.skip(run, cand, 'throttled');
            notes.push({ deployment: d.key, label: SKIP_LABEL.throttled });
            candidateRetryAt = cap.retryAt;
            skippedThrottled = true;
            throttled.push(cand);
            break;
          }
          lease = cap.lease;
        }
        const scope = new AttemptScope(run.signal, clock);
        const trace: AttemptTrace = { provider: d.provider.id, model: d.model, status: 0, errorType: null, latencyMs: 0, ttftMs: null };
        run.attempts.push(trace);
        const adapter = this.deps.adapterFor(d);
        const t0 = performance.now();
        try {
          const value = await attempt({
            candidate: cand,
            adapter,
            scope,
            remainingMs: run.deadlineAt - now,
            trace,
            requestId: run.id,
            lease,
          });
          const ms = performance.now() - t0;
          run.waitedMs += ms;
          trace.latencyMs = round(ms);
          trace.status = trace.status || 200;
          health.success(d.stateKey, admission.probe);
          if (!opts.keepScope) scope.dispose();
          run.sent = true;
          run.served = cand;
          run.fallbackUsed = cand.fallback;
          if (!opts.keepScope) this.emitAttempt(run, cand, trace);
          return { value, candidate: cand, scope, lease, trace };
        } catch (raw) {
          scope.dispose();
          const ms = performance.now() - t0;
          run.waitedMs += ms;
          trace.latencyMs = round(ms);
          if (isProgrammingError(raw)) {
            lease?.cancel();
            health.release(d.stateKey, admission.probe);
            trace.errorType = 'skipped';
            trace.message = 'internal error';
            this.emitAttempt(run, cand, trace);
            throw internalFault(d.key, raw);
          }
          const err = normalizeFailure(raw, d.provider);
          if (err instanceof AttemptAborted) {
            // The request was on its way when the client left, the deadline passed or the
            // server's shutdown grace ran out: the upstream most likely counted it, so its
            // capacity is spent, as for a timeout.
            lease?.reconcile();
            run.mayHaveSpent = true;
            run.sent = true;
            health.release(d.stateKey, admission.probe);
            trace.errorType = err.kind === 'deadline' ? 'timeout' : 'aborted';
            trace.message = err.message;
            this.emitAttempt(run, cand, trace);
            throw asAnswer(err);
          }
          if (err.unsent) {
            // The adapter cannot express this request for its provider (n > 1, an image URL
            // Ollama cannot take…): nothing was sent, and the next candidate may well serve it.
            // If none can, this refusal is the answer (below).
            lease?.cancel();
            health.release(d.stateKey, admission.probe);
            trace.errorType = 'skipped';
            // A prompt over a limit learnt from this deployment's own refusal (refused-for-size.ts) is no gap in the adapter.
            trace.message = err.inputTokenLimit !== undefined ? 'too large for its input-token limit' : `${err.label} for this provider`;
            this.emitAttempt(run, cand, trace);
            refusedHere ??= err;
            notes.push({ deployment: d.key, label: err.label, refused: true });
            break;
          }
          // A stream's head may have come (openUntilCommit set its 200) before it failed: keep it.
          trace.status = err.status ?? trace.status;
          trace.errorType = err.category;
          // Never the upstream's text: providers echo request content and key fragments in errors.
          trace.message = err.providerCode ? `${err.label} (${err.providerCode})` : err.label;
          this.emitAttempt(run, cand, trace);
          // An HTTP answer, a timeout or a reset mid-request means the upstream most likely counted it
          // (and its headers teach the pacer); only a connection that never opened gives the capacity back.
          // A stream whose 200 head came (trace.status set) was answered, whatever its error event says.
          if (err.status !== undefined || trace.status !== 0 || mayHaveReachedUpstream(err)) {
            // Refused at the door (a 400, larger than the deployment's tpm), it used no tokens: they go back, so the
            // pacer does not hold this deployment's minute for a request it never ran. The request itself counts.
            // Its Retry-After (Anthropic sends one with a request larger than the whole minute) is no wait for the others.
            const refusedAtDoor = err.status !== undefined && (err.category === 'invalid_request' || err.category === 'context_length');
            lease?.reconcile(refusedAtDoor ? 0 : undefined, refusedAtDoor ? withoutRetryAfter(err.headers) : err.headers);
            run.sent = true;
            // Answered with an error (a status, an error object), it generated nothing; timed out, cut or unreadable, it may have.
            if (err.status === undefined && err.reachedUpstream !== true) run.mayHaveSpent = true;
          } else lease?.cancel();
          // A parameter the adapter can send another way (OpenAI's reasoning models refuse `max_tokens`
          // and take `max_completion_tokens`): it has learnt to, so this candidate is asked again at once.
          if (!adapted && err.category === 'invalid_request' && adapter.adaptTo?.(err, d.model) === true) {
            adapted = true;
            health.release(d.stateKey, admission.probe);
            continue;
          }
          // A pinned candidate (alias null) is the client's own choice of model.
          const decision = decide(err, retries, cfg, random, cand.alias === null);
          if (decision.breaker === 'failure') health.failure(d.stateKey, admission.probe);
          else if (decision.breaker === 'success') health.success(d.stateKey, admission.probe);
          else health.release(d.stateKey, admission.probe);
          // A short 429 wait is held by pacing rather than a cooldown: concurrent requests meet the
          // deployment throttled and wait for it, where a cooldown refused them (503) if it was their
          // only candidate; this one, if it does not retry and no other candidate serves, waits too (below).
          const held = decision.throttle === true && this.holdFor(d, decision.cooldownMs);
          if (held && decision.next !== 'retry' && (opts.waits ?? 0) < MAX_WAITS) {
            skippedThrottled = true;
            throttled.push(cand);
          } else if (!held && decision.cooldownMs > 0) health.cooldown(d.stateKey, decision.cooldownMs, err.category, err.message);
          if (err.category === 'not_found') notFound = err;
          const refused = err.category === 'invalid_request' && decision.next === 'failover';
          if (refused) refusedHere ??= err;
          notes.push({ deployment: d.key, label: err.label, notFound: err.category === 'not_found', refused });
          // Not before its breaker lets a probe through, when this failure opened it.
          candidateRetryAt = Math.max(decision.cooldownMs > 0 ? clock.now() + decision.cooldownMs : clock.now() + 1000, health.retryAt(d.stateKey));

          if (opts.failFastAsFailover && decision.next !== 'retry') break;
          if (decision.next === 'fail') throw clientErrorFor(err);
          if (decision.next === 'retry' && clock.now() + decision.delayMs < run.deadlineAt) {
            retries++;
            waitedOwnCooldown = decision.cooldownMs > 0;
            const w0 = performance.now();
            await clock.sleep(decision.delayMs, run.signal).catch((e: unknown) => {
              // Cut short (client gone, shutdown): still a wait, not the gateway's own time.
              run.waitedMs += performance.now() - w0;
              throw asAnswer(e);
            });
            run.waitedMs += performance.now() - w0;
            continue;
          }
          if (decision.next === 'failover_larger_context') {
            contextError ??= err;
            // Only ever raise the floor: a refusal from a candidate of unknown size says nothing about smaller ones.
            contextFloor = { model: d.model, window: Math.max(contextFloor?.window ?? 0, d.contextWindow ?? 0) };
          } else if (decision.next === 'failover_content_policy' && policyError === undefined) {
            policyError = err;
            const next = opts.contentPolicyChain?.(cand) ?? [];
            if (next.length === 0) throw clientErrorFor(err);
            candidates = next;
            ci = -1;
            contextFloor = undefined;
            // The refusing alias's throttled deployments would refuse as it did: not worth a wait any more.
            dropAlias(throttled, cand.alias);
          }
          break;
        }
      }
      if (skippedThrottled) throttledRetryAt = Math.min(throttledRetryAt, candidateRetryAt);
      else retryAt = Math.min(retryAt, candidateRetryAt);
    }

    let waits = opts.waits ?? 0;
    if (throttled.length > 0 && this.deps.gate?.wait && waits < MAX_WAITS) {
      // Nobody could serve right now, but some only lacked local capacity: wait for the earliest.
      // A candidate served after the wait may refuse on content policy too: it moves to the fallbacks then, unless they are where it came from.
      const waitOpts = policyError === undefined ? opts : { ...opts, contentPolicyChain: undefined };
      for (;;) {
        const waited = await this.waitForCapacity(run, throttled, attempt, { ...waitOpts, waits });
        if ('value' in waited) return waited;
        // What the wait ended on replaces what was known before it: by now the pre-wait
        // estimate has passed, and may say "1 s" of a deployment the upstream blocked for longer.
        retryAt = Math.min(retryAt, waited.retryAt);
        if (waited.notFound) {
          notFound = waited.notFound.error;
          notes.push({ deployment: waited.notFound.deployment, label: notFound.label, notFound: true });
        }
        if (waited.refused === undefined) break;
        // The candidate waited for refused the request itself (too large for it): the others
        // throttled may take it, so they are waited for in turn, while the waits allow.
        refusedHere ??= waited.refused.upstream;
        notes.push({ deployment: waited.refused.deployment, label: waited.refused.upstream.label, refused: true });
        dropDeployment(throttled, waited.refused.deployment);
        if (throttled.length === 0 || ++waits >= MAX_WAITS) break;
      }
    } else {
      retryAt = Math.min(retryAt, throttledRetryAt);
    }
    reserved?.cancel();
    if (policyError) throw clientErrorFor(policyError);
    if (contextError) throw clientErrorFor(contextError);
    // No candidate could even express it: the client's request is the problem, not availability.
    // After a wait, that is the waited-for candidate's last word, weighed with the others' by the run that waited.
    if (refusedHere && allRefused(notes)) throw opts.reserved !== undefined ? new RefusedAfterWait(refusedHere, chain[0]!.deployment.key) : clientErrorFor(refusedHere);
    if (notFound && allNotFound(notes)) throw new ModelNotFoundError(notFound);
    if (run.deadlineAt <= clock.now()) throw deadlineError();
    throw exhaustedError(notes, retryAt === Number.POSITIVE_INFINITY ? clock.now() + 1000 : retryAt, clock.now());
  }

  private async waitForCapacity<T>(
    run: RequestRun,
    throttled: Candidate[],
    attempt: (input: AttemptInput) => Promise<T>,
    opts: ChainOptions,
  ): Promise<Attempted<T> | { retryAt: number; notFound?: { deployment: string; error: UpstreamError }; refused?: RefusedAfterWait }> {
    const w0 = performance.now();
    const got = await this.deps.gate!.wait!(throttled, run, opts.estimatedTokens, opts.callsFor).catch((e: unknown) => {
      run.waitedMs += performance.now() - w0;
      throw asAnswer(e);
    });
    run.waitedMs += performance.now() - w0;
    if (!('candidate' in got)) return got;
    // Capacity is reserved: run just that candidate through the ordinary loop. Held again (a short
    // 429) or throttled, it waits again from there, while MAX_WAITS allows.
    try {
      return await this.run(run, [got.candidate], attempt, { ...opts, reserved: got.lease, waits: (opts.waits ?? 0) + 1 });
    } catch (err) {
      // It was sent and refused for now (a 429 with a long Retry-After, a breaker it opened): when it
      // said it is back, not "in a second".
      if ((err as GatewayError).code === 'all_candidates_unavailable') {
        return { retryAt: this.deps.clock.now() + ((err as GatewayError).retryAfterS ?? 1) * 1000 };
      }
      // Its model is missing: that candidate's last word, weighed with the others' by the chain's answer.
      if (err instanceof ModelNotFoundError) {
        return { retryAt: this.deps.clock.now() + 1000, notFound: { deployment: got.candidate.deployment.key, error: err.upstream } };
      }
      if (err instanceof RefusedAfterWait) return { retryAt: this.deps.clock.now() + 1000, refused: err };
      throw err;
    }
  }

  /** Hold `d` for `ms` in the gate, when it can hold and wait; false: it cannot (a cooldown does instead). */
  private holdFor(d: Deployment, ms: number): boolean {
    const gate = this.deps.gate;
    if (!gate?.hold || !gate.wait) return false;
    gate.hold(d, this.deps.clock.now() + ms);
    return true;
  }

  private skip(run: RequestRun, cand: Candidate, reason: 'cooldown' | 'circuit_open' | 'throttled'): void {
    const trace: AttemptTrace = {
      provider: cand.deployment.provider.id,
      model: cand.deployment.model,
      status: 0,
      errorType: reason,
      latencyMs: 0,
      ttftMs: null,
    };
    run.attempts.push(trace);
    this.emitAttempt(run, cand, trace);
  }

  /** A kept-scope (streamed) attempt is over, however it ended: its event, with the trace as it ended, and what it spent. */
  attemptEnded(run: RequestRun, attempted: Attempted<unknown>, usage?: AttemptUsage): void {
    this.emitAttempt(run, attempted.candidate, attempted.trace);
    if (usage === undefined || !this.deps.bus.has('attemptUsage')) return;
    this.deps.bus.emit('attemptUsage', { requestId: run.id, deployment: attempted.candidate.deployment.key, usage });
  }

  private emitAttempt(run: RequestRun, cand: Candidate, trace: AttemptTrace): void {
    if (!this.deps.bus.has('attempt')) return;
    this.deps.bus.emit('attempt', { requestId: run.id, alias: cand.alias ?? run.model, deployment: cand.deployment.key, trace, fallback: cand.fallback });
  }
}

const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
/** `server` without a status is an answer that could not be read (malformed JSON, the wrong shape): it came, so the request arrived. */
const mayHaveReachedUpstream = (e: UpstreamError) =>
  e.reachedUpstream ?? (e.category === 'timeout' || e.category === 'server' || (e.category === 'network' && !NOT_SENT.has(e.providerCode ?? '')));

/** Removes, in place, the candidates of deployment `key`. */
function dropDeployment(list: Candidate[], key: string): void {
  let kept = 0;
  for (const c of list) if (c.deployment.key !== key) list[kept++] = c;
  list.length = kept;
}

/** Removes, in place, the candidates that `alias` brought. */
function dropAlias(list: Candidate[], alias: string | null): void {
  let kept = 0;
  for (const c of list) if (c.alias !== alias) list[kept++] = c;
  list.length = kept;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
