import { describe, expect, it } from 'vitest';
import type { BreakerConfig } from '../config/types.js';
import { CircuitBreaker } from './breaker.js';

/** Trips on 3 consecutive failures; the rate trip is out of reach (minRequests 1000). */
const CONSEC: BreakerConfig = {
  failureThreshold: 3,
  recoveryMs: 30_000,
  halfOpenProbes: 2,
  windowMs: 10_000,
  failureRate: 0.5,
  minRequests: 1000,
};
/** Trips only on the failure rate: ≥ 50% of ≥ 10 calls in a 10 s window. */
const RATE: BreakerConfig = { ...CONSEC, failureThreshold: 1000, minRequests: 10 };

const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00Z, a whole second

function failTimes(b: CircuitBreaker, n: number, at: number) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(b.onFailure(at, false));
  return out;
}

function tripped(cfg: BreakerConfig = CONSEC, at = T0): CircuitBreaker {
  const b = new CircuitBreaker(cfg);
  for (let i = 0; i < 3 && b.state === 'closed'; i++) b.onFailure(at, false);
  if (b.state !== 'open') throw new Error('fixture did not trip');
  return b;
}

describe('CircuitBreaker: closed', () => {
  it('starts closed and admits without a probe slot', () => {
    const b = new CircuitBreaker(CONSEC);
    expect(b.state).toBe('closed');
    expect(b.retryAt).toBe(0);
    expect(b.tryAcquire(T0)).toEqual({ allowed: true, probe: false, transition: null });
    expect(b.isAvailable(T0)).toBe(true);
  });

  it('opens on the failureThreshold-th consecutive failure, and says so once', () => {
    const b = new CircuitBreaker(CONSEC);
    expect(failTimes(b, 2, T0)).toEqual([null, null]);
    expect(b.state).toBe('closed');
    expect(b.onFailure(T0 + 5, false)).toEqual({ from: 'closed', to: 'open' });
    expect(b.state).toBe('open');
    expect(b.retryAt).toBe(T0 + 5 + CONSEC.recoveryMs);
  });

  it('a success resets the consecutive count', () => {
    const b = new CircuitBreaker(CONSEC);
    failTimes(b, 2, T0);
    expect(b.onSuccess(T0, false)).toBeNull();
    failTimes(b, 2, T0);
    expect(b.state).toBe('closed');
    expect(b.onFailure(T0, false)).toEqual({ from: 'closed', to: 'open' });
  });
});

describe('CircuitBreaker: failure-rate trip', () => {
  it('needs minRequests in the window before the rate counts', () => {
    const b = new CircuitBreaker(RATE);
    // 9 failures out of 9: a 100% rate, but below minRequests.
    expect(failTimes(b, 9, T0).every((t) => t === null)).toBe(true);
    expect(b.state).toBe('closed');
    expect(b.onFailure(T0 + 100, false)).toEqual({ from: 'closed', to: 'open' });
  });

  it('opens when failures reach failureRate of the window, not below', () => {
    const below = new CircuitBreaker(RATE);
    for (let i = 0; i < 6; i++) below.onSuccess(T0, false);
    failTimes(below, 4, T0); // 4/10 = 40%
    expect(below.state).toBe('closed');

    const at = new CircuitBreaker(RATE);
    // Alternating: the 10th call is the 5th failure, 5/10 = 50%.
    for (let i = 0; i < 4; i++) {
      at.onSuccess(T0 + i * 100, false);
      expect(at.onFailure(T0 + i * 100 + 50, false)).toBeNull();
    }
    at.onSuccess(T0 + 900, false);
    expect(at.onFailure(T0 + 950, false)).toEqual({ from: 'closed', to: 'open' });
  });

  it('forgets calls older than windowMs', () => {
    const fresh = new CircuitBreaker(RATE);
    failTimes(fresh, 9, T0);
    expect(fresh.onFailure(T0 + 9_999, false)).toEqual({ from: 'closed', to: 'open' });

    const expired = new CircuitBreaker(RATE);
    failTimes(expired, 9, T0);
    // Ten seconds later the first nine have left the window: 1 call, below minRequests.
    expect(expired.onFailure(T0 + 10_000, false)).toBeNull();
    expect(expired.state).toBe('closed');
    expect(expired.toJSON().window.map(([sec]) => sec)).toEqual([Math.floor((T0 + 10_000) / 1000)]);
  });

  it('is only judged on failures: successes never open it', () => {
    const b = new CircuitBreaker(RATE);
    failTimes(b, 9, T0);
    for (let i = 0; i < 5; i++) expect(b.onSuccess(T0, false)).toBeNull();
    expect(b.state).toBe('closed');
  });
});

describe('CircuitBreaker: open → half-open → closed/open', () => {
  it('rejects until recoveryMs has passed, then lets a probe through', () => {
    const b = tripped();
    expect(b.tryAcquire(T0 + 29_999)).toEqual({ allowed: false, probe: false, transition: null });
    expect(b.isAvailable(T0 + 29_999)).toBe(false);
    expect(b.state).toBe('open');
    expect(b.isAvailable(T0 + 30_000)).toBe(true);
    expect(b.state).toBe('open'); // isAvailable only looks
    expect(b.tryAcquire(T0 + 30_000)).toEqual({ allowed: true, probe: true, transition: { from: 'open', to: 'half_open' } });
    expect(b.state).toBe('half_open');
    expect(b.retryAt).toBe(0);
  });

  it('failures reported while open (late answers) neither extend nor re-announce it', () => {
    const b = tripped();
    expect(b.onFailure(T0 + 10_000, false)).toBeNull();
    expect(b.onSuccess(T0 + 10_001, false)).toBeNull();
    expect(b.state).toBe('open');
    expect(b.retryAt).toBe(T0 + 30_000);
  });

  it('admits exactly halfOpenProbes probes at a time', () => {
    const b = tripped();
    const t = T0 + 30_000;
    expect(b.tryAcquire(t).allowed).toBe(true);
    expect(b.tryAcquire(t)).toEqual({ allowed: true, probe: true, transition: null });
    expect(b.tryAcquire(t)).toEqual({ allowed: false, probe: false, transition: null });
    expect(b.isAvailable(t)).toBe(false);
    expect(b.toJSON().probesInFlight).toBe(2);
  });

  it('a probe success closes it, with a clean count', () => {
    const b = tripped();
    const t = T0 + 30_000;
    b.tryAcquire(t);
    expect(b.onSuccess(t + 10, true)).toEqual({ from: 'half_open', to: 'closed' });
    expect(b.state).toBe('closed');
    expect(b.toJSON().probesInFlight).toBe(0);
    failTimes(b, 2, t + 20);
    expect(b.state).toBe('closed');
  });

  it('closing clears the window, so old failures cannot re-trip it on the next one', () => {
    const b = new CircuitBreaker(RATE);
    failTimes(b, 10, T0);
    expect(b.state).toBe('open');
    b.tryAcquire(T0 + 30_000);
    b.onSuccess(T0 + 30_001, true);
    expect(b.onFailure(T0 + 30_002, false)).toBeNull();
    expect(b.state).toBe('closed');
  });

  it('a probe failure re-opens it with a fresh openedAt', () => {
    const b = tripped();
    const probeAt = T0 + 45_000;
    b.tryAcquire(T0 + 30_000);
    expect(b.onFailure(probeAt, true)).toEqual({ from: 'half_open', to: 'open' });
    expect(b.state).toBe('open');
    expect(b.retryAt).toBe(probeAt + 30_000);
    // Long past the first recovery, but not the second.
    expect(b.tryAcquire(probeAt + 29_999).allowed).toBe(false);
    expect(b.tryAcquire(probeAt + 30_000)).toEqual({ allowed: true, probe: true, transition: { from: 'open', to: 'half_open' } });
  });

  it('release frees a probe slot without judging health', () => {
    const b = tripped();
    const t = T0 + 30_000;
    b.tryAcquire(t);
    b.tryAcquire(t);
    expect(b.tryAcquire(t).allowed).toBe(false);
    b.release(false); // not a probe: frees nothing
    expect(b.tryAcquire(t).allowed).toBe(false);
    b.release(true);
    expect(b.state).toBe('half_open');
    expect(b.tryAcquire(t)).toEqual({ allowed: true, probe: true, transition: null });
  });

  it('the probe count never goes below zero', () => {
    const b = tripped();
    b.tryAcquire(T0 + 30_000);
    b.release(true);
    b.release(true);
    b.release(true);
    expect(b.toJSON().probesInFlight).toBe(0);
    // Still exactly halfOpenProbes admitted afterwards.
    expect([b.tryAcquire(T0 + 30_000).allowed, b.tryAcquire(T0 + 30_000).allowed, b.tryAcquire(T0 + 30_000).allowed]).toEqual([true, true, false]);
  });
});

describe('CircuitBreaker: toJSON / fromJSON', () => {
  it('is plain data that survives JSON and restores an open breaker', () => {
    const snap = JSON.parse(JSON.stringify(tripped().toJSON()));
    const b = CircuitBreaker.fromJSON(CONSEC, snap);
    expect(b.state).toBe('open');
    expect(b.retryAt).toBe(T0 + 30_000);
    expect(b.tryAcquire(T0 + 29_999).allowed).toBe(false);
    expect(b.tryAcquire(T0 + 30_000).transition).toEqual({ from: 'open', to: 'half_open' });
  });

  it('restores the consecutive count and the window of a closed breaker', () => {
    const a = new CircuitBreaker(CONSEC);
    failTimes(a, 2, T0);
    const b = CircuitBreaker.fromJSON(CONSEC, a.toJSON());
    expect(b.onFailure(T0 + 1, false)).toEqual({ from: 'closed', to: 'open' });

    const r = new CircuitBreaker(RATE);
    failTimes(r, 9, T0);
    const r2 = CircuitBreaker.fromJSON(RATE, JSON.parse(JSON.stringify(r.toJSON())));
    expect(r2.onFailure(T0 + 500, false)).toEqual({ from: 'closed', to: 'open' });
  });

  it('restores half-open probes in flight', () => {
    const a = tripped();
    a.tryAcquire(T0 + 30_000);
    a.tryAcquire(T0 + 30_000);
    const b = CircuitBreaker.fromJSON(CONSEC, a.toJSON());
    expect(b.state).toBe('half_open');
    expect(b.tryAcquire(T0 + 30_000).allowed).toBe(false);
    b.release(true);
    expect(b.tryAcquire(T0 + 30_000).allowed).toBe(true);
  });

  it('snapshots are copies: neither side sees the other mutate', () => {
    const a = new CircuitBreaker(RATE);
    failTimes(a, 3, T0);
    const snap = a.toJSON();
    snap.window[0]![2] = 1000;
    snap.consecutiveFailures = 99;
    expect(a.toJSON().window[0]![2]).toBe(3);
    expect(a.toJSON().consecutiveFailures).toBe(3);

    const b = CircuitBreaker.fromJSON(RATE, snap);
    snap.window[0]![2] = 0;
    expect(b.toJSON().window[0]![2]).toBe(1000);
  });
});
