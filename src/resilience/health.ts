/**
 * Per-deployment health: a circuit breaker and a cooldown deadline each,
 * created lazily. In memory for now; the snapshot shape is plain data so the
 * state/ seam can move it to a shared store without touching the executor.
 */
import type { ResilienceConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { EventBus } from '../observability/events.js';
import type { ErrorCategory } from './upstream-error.js';
import { CircuitBreaker, type BreakerState, type Transition } from './breaker.js';

interface Entry {
  breaker: CircuitBreaker;
  cooldownUntil: number;
  /** The upstream's message when the cooldown is for a 404 (the deployment's model is missing there). */
  missingModel: string | undefined;
}

export type Admission =
  | { ok: true; probe: boolean }
  | {
      ok: false;
      reason: 'cooldown' | 'circuit_open';
      retryAt: number;
      /** A cooldown for a 404: the upstream's message, so the chain can still answer 404 model_not_found. */
      missingModel?: string;
    };

/** Admissions are read, never changed: shared objects instead of one per request. */
const ADMITTED: Admission = Object.freeze({ ok: true, probe: false });
const ADMITTED_PROBE: Admission = Object.freeze({ ok: true, probe: true });

export class Health {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly cfg: ResilienceConfig,
    private readonly clock: Clock,
    private readonly bus: EventBus,
  ) {}

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = { breaker: new CircuitBreaker(this.cfg.breaker), cooldownUntil: 0, missingModel: undefined };
      this.entries.set(key, e);
    }
    return e;
  }

  /**
   * Admit a call now, taking a half-open probe slot when that is what it is.
   * `ownCooldown`: the caller is the request that waited out this cooldown's
   * Retry-After itself; timers may wake a hair before the wall clock agrees.
   * `now`: the caller's reading of the clock, when it has one.
   */
  admit(key: string, ownCooldown = false, now = this.clock.now()): Admission {
    const e = this.entry(key);
    if (e.cooldownUntil > now && !ownCooldown) {
      return e.missingModel === undefined
        ? { ok: false, reason: 'cooldown', retryAt: e.cooldownUntil }
        : { ok: false, reason: 'cooldown', retryAt: e.cooldownUntil, missingModel: e.missingModel };
    }
    const r = e.breaker.tryAcquire(now);
    this.emit(key, r.transition, now);
    if (!r.allowed) return { ok: false, reason: 'circuit_open', retryAt: Math.max(e.breaker.retryAt, now + 1) };
    return r.probe ? ADMITTED_PROBE : ADMITTED;
  }

  /** Could `key` be admitted now (no slot taken)? */
  available(key: string): boolean {
    const now = this.clock.now();
    const e = this.entries.get(key);
    return !e || (e.cooldownUntil <= now && e.breaker.isAvailable(now));
  }

  /** When `key` is expected back (0: now). */
  retryAt(key: string): number {
    const e = this.entries.get(key);
    if (!e) return 0;
    return Math.max(e.cooldownUntil, e.breaker.retryAt);
  }

  success(key: string, probe: boolean): void {
    const now = this.clock.now();
    this.emit(key, this.entry(key).breaker.onSuccess(now, probe), now);
  }

  failure(key: string, probe: boolean): void {
    const now = this.clock.now();
    this.emit(key, this.entry(key).breaker.onFailure(now, probe), now);
  }

  release(key: string, probe: boolean): void {
    this.entry(key).breaker.release(probe);
  }

  /** `message`: the upstream's, kept for a `not_found` cooldown (see Admission.missingModel). */
  cooldown(key: string, ms: number, reason: ErrorCategory, message?: string): void {
    const e = this.entry(key);
    const until = this.clock.now() + ms;
    if (until <= e.cooldownUntil) return;
    e.cooldownUntil = until;
    e.missingModel = reason === 'not_found' ? (message ?? '') : undefined;
    this.bus.emit('cooldown', { deployment: key, untilMs: until, reason });
  }

  /**
   * Breakers move out of `open` lazily, when a request asks; an idle gateway would show
   * a circuit open long after it lets probes through. Before metrics are read, those
   * due are moved to half-open (and their events emitted), as the next request would.
   */
  settle(now = this.clock.now()): void {
    for (const [key, e] of this.entries) this.emit(key, e.breaker.halfOpenIfDue(now), now);
  }

  /** Deployments tracked (bounded by configuration, not by what clients send). */
  get size(): number {
    return this.entries.size;
  }

  state(key: string): BreakerState {
    return this.entries.get(key)?.breaker.state ?? 'closed';
  }

  private emit(key: string, t: Transition, at: number): void {
    if (t) this.bus.emit('breaker', { deployment: key, from: t.from, to: t.to, at });
  }
}
