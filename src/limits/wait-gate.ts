/**
 * The bounded wait for outbound capacity, used when no candidate has any now.
 *
 * Waiters queue in arrival order behind ONE timer, set for the earliest moment
 * any of them could proceed. When it fires, only the waiters due by then are
 * re-checked, first come first served, and a candidate set that just failed is
 * not re-checked for a later waiter asking as much or more: a refill wakes
 * whoever it can serve, not every sleeper (no thundering herd). Waiters already
 * due go before a newcomer (`serveDue`): a timer fires late under load, and a
 * release is re-checked only on the next tick, so a request arriving in between
 * would otherwise take the capacity a waiter had been promised. A waiter whose
 * next chance lies beyond its deadline is answered at once with that time as
 * its Retry-After, rather than sleeping out the deadline for nothing. Capacity
 * given back early (a cancelled lease, usage below its estimate) triggers a
 * re-check on the next tick.
 *
 * The number of waiters is bounded: past `maxWaiters` the answer is an
 * immediate overflow, so a flood cannot pile up unbounded promises.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Deployment } from '../routing/deployment.js';
import type { Lease } from './lease.js';
import type { CallsFor, Pacer } from './pacer.js';
import type { Signal } from '../core/signal.js';

export const DEFAULT_MAX_WAITERS = 1000;

export type GateResult =
  | { ok: true; dep: Deployment; lease: Lease; index: number; waitedMs: number }
  | { ok: false; reason: 'timed_out' | 'beyond_budget' | 'overflow'; retryAfterMs: number; waitedMs: number };

interface Waiter {
  readonly candidates: readonly Deployment[];
  /** Identity of the candidate set, for skipping re-checks known to fail. */
  readonly setKey: string;
  readonly tokens: number;
  /** Calls a candidate's attempt makes (batched embeddings); undefined: one. */
  readonly callsFor: CallsFor | undefined;
  readonly started: number;
  readonly deadline: number;
  wakeAt: number;
  resolve(r: GateResult): void;
  reject(reason: unknown): void;
  signal: Signal | undefined;
  onAbort: (() => void) | undefined;
}

export interface WaitGateOptions {
  maxWaiters?: number;
}

export class WaitGate {
  private readonly maxWaiters: number;
  private waiters: Waiter[] = [];
  private timer: TimerHandle | null = null;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly pacer: Pacer,
    private readonly clock: Clock,
    options: WaitGateOptions = {},
  ) {
    this.maxWaiters = options.maxWaiters ?? DEFAULT_MAX_WAITERS;
    pacer.onRelease(() => {
      if (this.waiters.length === 0) return;
      for (const w of this.waiters) w.wakeAt = Math.min(w.wakeAt, this.clock.now());
      this.schedule(this.clock.now());
    });
  }

  /** Waiters currently queued. */
  get size(): number {
    return this.waiters.length;
  }

  /**
   * Capacity on the first of `candidates` (in order) that has some, waiting up
   * to `maxWaitMs` for it. Rejects with the signal's reason if it aborts first.
   */
  wait(
    candidates: readonly Deployment[],
    tokens: number,
    maxWaitMs: number,
    signal?: Signal,
    callsFor?: CallsFor,
  ): Promise<GateResult> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.serveDue(this.clock.now());
    const r = this.pacer.acquireFirst(candidates, tokens, callsFor);
    if ('lease' in r) return Promise.resolve({ ok: true, dep: r.dep, lease: r.lease, index: r.index, waitedMs: 0 });
    const wait = Number.isFinite(r.waitMs) ? r.waitMs : 0;
    if (candidates.length === 0 || wait > maxWaitMs) {
      // Not waited at all: the earliest capacity is past the budget.
      return Promise.resolve({ ok: false, reason: 'beyond_budget', retryAfterMs: wait, waitedMs: 0 });
    }
    if (this.waiters.length >= this.maxWaiters) {
      return Promise.resolve({ ok: false, reason: 'overflow', retryAfterMs: wait, waitedMs: 0 });
    }
    const now = this.clock.now();
    return new Promise<GateResult>((resolve, reject) => {
      const w: Waiter = {
        candidates,
        setKey: candidates.length === 1 ? candidates[0]!.key : candidates.map((d) => d.key).join('\n'),
        tokens,
        callsFor,
        started: now,
        deadline: now + maxWaitMs,
        wakeAt: now + wait,
        resolve,
        reject,
        signal,
        onAbort: undefined,
      };
      if (signal) {
        w.onAbort = () => {
          this.remove(w);
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.waiters.push(w);
      this.schedule(w.wakeAt);
    });
  }

  /**
   * Re-check now the waiters due by `now`, before a newcomer takes capacity. Without
   * waiters, or none due yet, one comparison: this runs before every paced attempt.
   */
  serveDue(now: number): void {
    if (this.timerAt > now) return;
    this.timer?.clear();
    this.pass(now);
  }

  private schedule(at: number): void {
    if (at >= this.timerAt) return;
    this.timer?.clear();
    this.timerAt = at;
    this.timer = this.clock.setTimer(() => this.pass(), Math.max(0, at - this.clock.now()));
  }

  /** Re-check the waiters that are due, in arrival order; answer or re-arm each. */
  private pass(now = this.clock.now()): void {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    // Candidate sets that failed in this pass: capacity only shrinks within it.
    let failed: Map<string, { tokens: number; wakeAt: number; batched: boolean }> | undefined;
    let next = Number.POSITIVE_INFINITY;
    const kept: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.wakeAt <= now) {
        const known = failed?.get(w.setKey);
        // A batched waiter's calls per candidate are its own: compared with nobody's.
        if (known && known.tokens <= w.tokens && !known.batched && w.callsFor === undefined) {
          w.wakeAt = known.wakeAt;
        } else {
          const r = this.pacer.acquireFirst(w.candidates, w.tokens, w.callsFor);
          if ('lease' in r) {
            this.settle(w, { ok: true, dep: r.dep, lease: r.lease, index: r.index, waitedMs: now - w.started });
            continue;
          }
          w.wakeAt = now + r.waitMs;
          (failed ??= new Map()).set(w.setKey, { tokens: w.tokens, wakeAt: w.wakeAt, batched: w.callsFor !== undefined });
        }
      }
      if (w.wakeAt > w.deadline) {
        this.settle(w, { ok: false, reason: 'timed_out', retryAfterMs: w.wakeAt - now, waitedMs: now - w.started });
        continue;
      }
      kept.push(w);
      if (w.wakeAt < next) next = w.wakeAt;
    }
    this.waiters = kept;
    if (next !== Number.POSITIVE_INFINITY) this.schedule(next);
  }

  private settle(w: Waiter, r: GateResult): void {
    if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
    w.resolve(r);
  }

  private remove(w: Waiter): void {
    const i = this.waiters.indexOf(w);
    if (i !== -1) this.waiters.splice(i, 1);
    if (this.waiters.length === 0 && this.timer) {
      this.timer.clear();
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
    }
  }
}
