/**
 * Circuit breaker per deployment: closed → open after `failureThreshold`
 * consecutive failures or a failure rate over a rolling window; open →
 * half-open after `recoveryMs`; half-open admits `halfOpenProbes` probes at a
 * time, and one success closes it while one failure re-opens it.
 *
 * The state is plain data (`toJSON`/`fromJSON`) so it can later live in a
 * shared store. Transitions out of `open` happen lazily when someone asks,
 * against the injected clock, so no timers are needed.
 */
import type { BreakerConfig } from '../config/types.js';

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  openedAt: number;
  probesInFlight: number;
  /** Rolling window, one slot per second: [second, successes, failures]. */
  window: [number, number, number][];
}

export type Transition = { from: BreakerState; to: BreakerState } | null;

const SLOT_MS = 1000;

/** The closed breaker's answer, every request: one shared object, read only. */
const ALLOWED = Object.freeze({ allowed: true, probe: false, transition: null });

export class CircuitBreaker {
  private s: BreakerSnapshot = { state: 'closed', consecutiveFailures: 0, openedAt: 0, probesInFlight: 0, window: [] };

  constructor(private readonly cfg: BreakerConfig) {}

  get state(): BreakerState {
    return this.s.state;
  }

  /** When an open breaker will let a probe through. */
  get retryAt(): number {
    return this.s.state === 'open' ? this.s.openedAt + this.cfg.recoveryMs : 0;
  }

  /**
   * May a request go through now? A half-open grant takes a probe slot that
   * the caller must give back through onSuccess/onFailure/release.
   */
  tryAcquire(now: number): { allowed: boolean; probe: boolean; transition: Transition } {
    let transition: Transition = null;
    if (this.s.state === 'open') {
      if (now < this.s.openedAt + this.cfg.recoveryMs) return { allowed: false, probe: false, transition };
      transition = this.move('half_open');
    }
    if (this.s.state === 'half_open') {
      if (this.s.probesInFlight >= this.cfg.halfOpenProbes) return { allowed: false, probe: false, transition };
      this.s.probesInFlight++;
      return { allowed: true, probe: true, transition };
    }
    return transition === null ? ALLOWED : { allowed: true, probe: false, transition };
  }

  /** An open breaker whose recovery time has passed is half-open now, asked or not (what `tryAcquire` would find). */
  halfOpenIfDue(now: number): Transition {
    return this.s.state === 'open' && now >= this.s.openedAt + this.cfg.recoveryMs ? this.move('half_open') : null;
  }

  /** Would tryAcquire allow a request, without taking a probe slot? */
  isAvailable(now: number): boolean {
    if (this.s.state === 'closed') return true;
    if (this.s.state === 'open') return now >= this.s.openedAt + this.cfg.recoveryMs;
    return this.s.probesInFlight < this.cfg.halfOpenProbes;
  }

  onSuccess(now: number, probe: boolean): Transition {
    if (probe) this.s.probesInFlight = Math.max(0, this.s.probesInFlight - 1);
    this.count(now, true);
    this.s.consecutiveFailures = 0;
    if (this.s.state === 'half_open') {
      this.s.window = [];
      return this.move('closed');
    }
    return null;
  }

  onFailure(now: number, probe: boolean): Transition {
    if (probe) this.s.probesInFlight = Math.max(0, this.s.probesInFlight - 1);
    this.count(now, false);
    this.s.consecutiveFailures++;
    if (this.s.state === 'half_open') return this.open(now);
    if (this.s.state === 'closed' && (this.s.consecutiveFailures >= this.cfg.failureThreshold || this.rateTripped(now))) {
      return this.open(now);
    }
    return null;
  }

  /** An outcome that says nothing about health (client gone, our own limit): just free the probe slot. */
  release(probe: boolean): void {
    if (probe) this.s.probesInFlight = Math.max(0, this.s.probesInFlight - 1);
  }

  toJSON(): BreakerSnapshot {
    return { ...this.s, window: this.s.window.map((w) => [...w] as [number, number, number]) };
  }

  static fromJSON(cfg: BreakerConfig, snap: BreakerSnapshot): CircuitBreaker {
    const b = new CircuitBreaker(cfg);
    b.s = { ...snap, window: snap.window.map((w) => [...w] as [number, number, number]) };
    return b;
  }

  private open(now: number): Transition {
    this.s.openedAt = now;
    this.s.consecutiveFailures = 0;
    this.s.window = [];
    return this.move('open');
  }

  private move(to: BreakerState): Transition {
    const from = this.s.state;
    this.s.state = to;
    return from === to ? null : { from, to };
  }

  private count(now: number, ok: boolean): void {
    const sec = Math.floor(now / SLOT_MS);
    const w = this.s.window;
    const last = w[w.length - 1];
    if (last && last[0] === sec) {
      last[ok ? 1 : 2]++;
    } else {
      w.push([sec, ok ? 1 : 0, ok ? 0 : 1]);
      const oldest = sec - Math.ceil(this.cfg.windowMs / SLOT_MS);
      while (w.length > 0 && w[0]![0] <= oldest) w.shift();
    }
  }

  private rateTripped(now: number): boolean {
    const oldest = Math.floor(now / SLOT_MS) - Math.ceil(this.cfg.windowMs / SLOT_MS);
    let ok = 0;
    let bad = 0;
    for (const [sec, s, f] of this.s.window) {
      if (sec <= oldest) continue;
      ok += s;
      bad += f;
    }
    const total = ok + bad;
    return total >= this.cfg.minRequests && bad / total >= this.cfg.failureRate;
  }
}
