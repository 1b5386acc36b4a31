/**
 * Outbound pacing: keeps each provider and deployment below its limits, so an
 * upstream 429 is the exception rather than how limits are discovered.
 *
 * One attempt may go to a deployment only when all of these have room, taken
 * all-or-nothing: the provider's rpm/tpm (shared by every deployment of that
 * provider; rpm falls back to `limits.defaultRpm`), the deployment's own
 * rpm/tpm, and what the upstream's headers said is left (see learned-limit.ts)
 * or asked us to wait (`retry-after`). Nothing configured and nothing learned
 * means no limit.
 *
 * Everything is synchronous and built once per provider/deployment key; a
 * request allocates only its lease.
 */
import type { Config } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { NO_HEADERS, type UpstreamHeaders } from '../providers/types.js';
import type { Deployment } from '../routing/deployment.js';
import { MemoryStateStore } from '../state/memory-store.js';
import type { StateStore } from '../state/store.js';
import { LearnedLimit } from './learned-limit.js';
import type { Lease } from './lease.js';
import { parseRateLimitHeaders } from './rate-limit-headers.js';
import { ScopeLimits } from './scope-limits.js';

/** No capacity now; `waitMs` until the earliest moment there should be. */
export interface Throttled {
  readonly waitMs: number;
}

export interface Acquired {
  readonly dep: Deployment;
  readonly lease: Lease;
  /** Position of `dep` in the candidates given. */
  readonly index: number;
}

/** Upstream calls one attempt on a deployment makes (1 unless an embeddings request is split into batches). */
export type CallsFor = (dep: Deployment) => number;

export function isThrottled(r: Lease | Throttled): r is Throttled {
  return (r as Throttled).waitMs !== undefined;
}

/** Pacing state of one deployment key; the provider scope is shared with its siblings. */
class DeploymentState {
  readonly requests = new LearnedLimit();
  readonly tokens = new LearnedLimit();
  /** Honoured `retry-after`: nothing goes before this. */
  blockedUntil = 0;
  /**
   * Since a `retry-after` (or a held 429) and until an answer comes that is not one: one
   * request at a time. Where the upstream says nothing of its limits (no rate-limit headers,
   * no rpm configured), every request that waited out the block went at once, and most met
   * the next 429; now one goes first, and the rest follow once it was answered.
   */
  probing = false;
  /** The one request sent while probing is out (a lease taken with `probe`). */
  probeOut = false;
  /** Leases taken and not yet reconciled or cancelled. */
  inFlight = 0;
  inFlightTokens = 0;
  /**
   * Of those, the ones whose answer's head has come (a stream still running): the upstream has
   * counted them, so its `remaining` already excludes them and they are not subtracted again.
   */
  answered = 0;
  answeredTokens = 0;

  constructor(
    readonly dep: Deployment,
    readonly provider: ScopeLimits,
    readonly own: ScopeLimits,
    readonly pacer: Pacer,
  ) {}
}

export class Pacer {
  private readonly defaultRpm: number | null;
  /** Hot-path cache in front of the store, keyed by `dep.stateKey` (no string building per request). */
  private readonly states = new Map<string, DeploymentState>();
  private readonly releaseListeners: (() => void)[] = [];

  constructor(
    config: Pick<Config, 'limits'>,
    readonly clock: Clock,
    private readonly store: StateStore = new MemoryStateStore(),
  ) {
    this.defaultRpm = config.limits.defaultRpm;
  }

  /**
   * Take capacity on `dep` for one attempt of about `tokens`, or say how long
   * until there is some. `now`: the caller's clock reading, when it has just taken one.
   * `calls`: the upstream calls the attempt makes (an embeddings request split into
   * batches); each counts against the request limits.
   */
  tryAcquire(dep: Deployment, estimatedTokens: number, now = this.clock.now(), calls = 1): Lease | Throttled {
    const tokens = estimatedTokens > 0 ? estimatedTokens : 0; // NaN and negatives count as nothing
    const st = this.state(dep);
    const wait = this.waitFor(st, tokens, now, calls);
    if (wait > 0) return { waitMs: wait };
    st.provider.take(tokens, now, calls);
    st.own.take(tokens, now, calls);
    st.requests.take(calls, now);
    st.tokens.take(tokens, now);
    st.inFlight += calls;
    st.inFlightTokens += tokens;
    if (st.probing) st.probeOut = true;
    return new PacerLease(st, tokens, now, calls, st.probing);
  }

  /** The first of `deps`, in order, with capacity now; else the earliest wait among them. */
  acquireFirst(deps: readonly Deployment[], tokens: number, callsFor?: CallsFor): Acquired | Throttled {
    let earliest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < deps.length; i++) {
      const r = this.tryAcquire(deps[i]!, tokens, undefined, callsFor ? callsFor(deps[i]!) : 1);
      if (!isThrottled(r)) return { dep: deps[i]!, lease: r, index: i };
      if (r.waitMs < earliest) earliest = r.waitMs;
    }
    return { waitMs: earliest };
  }

  /** Milliseconds until `dep` has room for `tokens` in `calls` calls (0: now). Takes nothing. */
  waitMs(dep: Deployment, tokens: number, calls = 1): number {
    return this.waitFor(this.state(dep), tokens, this.clock.now(), calls);
  }

  /** The soonest any of `deps` has room (0: one has now); Infinity for none given. For Retry-After. */
  earliestMs(deps: readonly Deployment[], tokens: number, callsFor?: CallsFor): number {
    const now = this.clock.now();
    let earliest = Number.POSITIVE_INFINITY;
    for (const dep of deps) {
      const w = this.waitFor(this.state(dep), tokens, now, callsFor ? callsFor(dep) : 1);
      if (w === 0) return 0;
      if (w < earliest) earliest = w;
    }
    return earliest;
  }

  /**
   * Learn from an upstream response's headers (success or failure): its
   * remaining requests/tokens and their reset, and any `retry-after`. Prefer
   * `lease.reconcile(actual, headers)` when the attempt's lease is at hand:
   * it stops counting that attempt as in flight first.
   */
  observe(dep: Deployment, headers: UpstreamHeaders, now?: number): void {
    // Most answers carry none of the headers read here (vLLM, Ollama, most proxies): nothing to parse.
    if (headers === NO_HEADERS) return;
    this.learnFrom(this.state(dep), headers, now ?? this.clock.now());
  }

  /**
   * @internal for leases. Only attempts still out whose answer has not begun are subtracted from
   * the upstream's `remaining`: those answered (the attempt learning from its head among them)
   * were counted before they were answered. Subtracted again, a burst of streams read as twice
   * its size, and requests the upstream had room for were throttled.
   */
  learnFrom(st: DeploymentState, headers: UpstreamHeaders, now: number): void {
    const info = parseRateLimitHeaders(headers, now);
    if (info.requests?.resetAt !== undefined) {
      st.requests.observe(info.requests.remaining, info.requests.resetAt, st.inFlight - st.answered, now, info.requests.limit);
    }
    if (info.tokens?.resetAt !== undefined) {
      st.tokens.observe(info.tokens.remaining, info.tokens.resetAt, st.inFlightTokens - st.answeredTokens, now, info.tokens.limit);
    }
    if (info.retryAfterMs !== undefined && info.retryAfterMs > 0) {
      st.blockedUntil = Math.max(st.blockedUntil, now + info.retryAfterMs);
      st.probing = true;
    }
  }

  /** Nothing goes to `dep` before `until` (epoch ms), as a `retry-after` says: a wait the executor read elsewhere (a 429's message). */
  block(dep: Deployment, until: number): void {
    const st = this.state(dep);
    if (until > st.blockedUntil) st.blockedUntil = until;
    st.probing = true;
  }

  /** Called whenever capacity is given back early (a cancel, or usage below its estimate). */
  onRelease(fn: () => void): () => void {
    this.releaseListeners.push(fn);
    return () => {
      const i = this.releaseListeners.indexOf(fn);
      if (i !== -1) this.releaseListeners.splice(i, 1);
    };
  }

  /** @internal for leases */
  released(): void {
    for (let i = 0; i < this.releaseListeners.length; i++) this.releaseListeners[i]!();
  }

  private waitFor(st: DeploymentState, tokens: number, now: number, calls: number): number {
    let w = st.blockedUntil > now ? st.blockedUntil - now : 0;
    // After a block, one request at a time until one is answered (a release wakes the waiters sooner).
    if (w === 0 && st.probeOut) w = PROBE_WAIT_MS;
    w = Math.max(w, st.provider.waitMs(tokens, now, calls));
    w = Math.max(w, st.own.waitMs(tokens, now, calls));
    w = Math.max(w, st.requests.waitMs(calls, now));
    return Math.max(w, st.tokens.waitMs(tokens, now));
  }

  private state(dep: Deployment): DeploymentState {
    let st = this.states.get(dep.stateKey);
    if (st === undefined) {
      const p = dep.provider;
      const provider = this.store.local(
        `pace:provider:${p.id}`,
        () => new ScopeLimits(p.rpm ?? this.defaultRpm, p.tpm),
      );
      const own = this.store.local(`pace:deployment:${dep.stateKey}`, () => new ScopeLimits(dep.rpm, dep.tpm));
      st = new DeploymentState(dep, provider, own, this);
      this.states.set(dep.stateKey, st);
    }
    return st;
  }
}

/** How long a request waits for the probe after a block to be answered, at most, before it looks again. */
const PROBE_WAIT_MS = 1000;

/**
 * The probe after a block is back: answered (`answered`: not a rate limit, not a failure), everyone
 * may go again; else the next waiter is the next probe. Either way the waiters look again.
 */
function probeBack(st: DeploymentState, answered: boolean): void {
  st.probeOut = false;
  if (answered && st.blockedUntil <= st.pacer.clock.now()) st.probing = false;
  st.pacer.released();
}

class PacerLease implements Lease {
  private done = false;
  /** Its answer's head came (`learn`): counted in `answered` until it is settled. */
  private answered = false;
  /** Headers already learnt from at the answer's head: not learnt again (and stale) at its end. */
  private learnt: UpstreamHeaders | undefined = undefined;
  private readonly requestsEpoch: number;
  private readonly tokensEpoch: number;

  constructor(
    private readonly st: DeploymentState,
    private readonly tokens: number,
    private readonly at: number,
    private readonly calls = 1,
    /** Sent as the one request after a block (DeploymentState.probing), until it is back. */
    private probe = false,
  ) {
    this.requestsEpoch = st.requests.epoch;
    this.tokensEpoch = st.tokens.epoch;
  }

  reconcile(actualTokens?: number, headers?: UpstreamHeaders): void {
    if (this.done) return;
    this.done = true;
    const st = this.st;
    const pacer = st.pacer;
    st.inFlight -= this.calls;
    st.inFlightTokens -= this.tokens;
    if (this.answered) {
      st.answered -= this.calls;
      st.answeredTokens -= this.tokens;
    }
    if (actualTokens !== undefined && Number.isFinite(actualTokens) && actualTokens >= 0) {
      const delta = actualTokens - this.tokens;
      let now: number | undefined;
      if (delta !== 0) {
        now = pacer.clock.now();
        st.provider.adjustTokens(this.at, delta, now);
        st.own.adjustTokens(this.at, delta, now);
        st.tokens.giveBack(-delta, this.tokensEpoch, now);
      }
      if (headers && headers !== this.learnt) pacer.observe(st.dep, headers, now);
      if (delta < 0) pacer.released();
      // Counted tokens come with an answer, never with a rate limit (reconciled without a count).
      if (this.probe) this.probeBack(true);
      return;
    }
    if (headers && headers !== this.learnt) pacer.observe(st.dep, headers);
    if (this.probe) this.probeBack(false);
  }

  private probeBack(answered: boolean): void {
    this.probe = false;
    probeBack(this.st, answered);
  }

  learn(headers: UpstreamHeaders): void {
    if (this.done) return;
    // A stream's head: an answer, not a rate limit.
    if (this.probe) this.probeBack(true);
    if (headers === NO_HEADERS || headers === this.learnt) return;
    this.learnt = headers;
    const st = this.st;
    if (!this.answered) {
      this.answered = true;
      st.answered += this.calls;
      st.answeredTokens += this.tokens;
    }
    st.pacer.learnFrom(st, headers, st.pacer.clock.now());
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    const st = this.st;
    const pacer = st.pacer;
    const now = pacer.clock.now();
    st.inFlight -= this.calls;
    st.inFlightTokens -= this.tokens;
    if (this.answered) {
      st.answered -= this.calls;
      st.answeredTokens -= this.tokens;
    }
    st.provider.giveBack(this.tokens, this.at, now, this.calls);
    st.own.giveBack(this.tokens, this.at, now, this.calls);
    st.requests.giveBack(this.calls, this.requestsEpoch, now);
    st.tokens.giveBack(this.tokens, this.tokensEpoch, now);
    if (this.probe) {
      // Never sent: the next waiter is the probe.
      this.probe = false;
      st.probeOut = false;
    }
    pacer.released();
  }
}
