import { describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import { deployment, provider } from '../../test/helpers/deployments.js';
import { isThrottled, Pacer } from './pacer.js';
import { WaitGate, type GateResult } from './wait-gate.js';

function setup(maxWaiters?: number) {
  const clock = new VirtualClock();
  const pacer = new Pacer({ limits: { defaultRpm: null } }, clock);
  const gate = new WaitGate(pacer, clock, maxWaiters === undefined ? {} : { maxWaiters });
  return { clock, pacer, gate };
}

/** Track a promise's settlement without awaiting it. */
function track<T>(p: Promise<T>): { value?: T; error?: unknown } {
  const out: { value?: T; error?: unknown } = {};
  p.then(
    (v) => (out.value = v),
    (e) => (out.error = e),
  );
  return out;
}

describe('WaitGate', () => {
  it('answers at once when a candidate has capacity', async () => {
    const { gate } = setup();
    const d = deployment(provider('p'), 'm');
    const r = await gate.wait([d], 10, 2000);
    expect(r).toMatchObject({ ok: true, dep: d, index: 0, waitedMs: 0 });
  });

  it('wakes at the earliest candidate’s time and takes that one', async () => {
    const { clock, pacer, gate } = setup();
    const a = deployment(provider('a'), 'm');
    const b = deployment(provider('b'), 'm');
    pacer.observe(a, { 'retry-after-ms': '1500' });
    pacer.observe(b, { 'retry-after-ms': '500' });
    const r = track(gate.wait([a, b], 1, 2000));
    await clock.advance(499);
    expect(r.value).toBeUndefined();
    await clock.advance(1);
    expect(r.value).toMatchObject({ ok: true, dep: b, index: 1, waitedMs: 500 });
    expect(gate.size).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('answers at once with Retry-After when the earliest capacity is beyond the wait', async () => {
    const { pacer, gate } = setup();
    const a = deployment(provider('a'), 'm');
    pacer.observe(a, { 'retry-after': '5' });
    const r = await gate.wait([a], 1, 2000);
    expect(r).toEqual({ ok: false, reason: 'beyond_budget', retryAfterMs: 5000, waitedMs: 0 });
  });

  it('serves waiters first come first served and times out the rest early when capacity is taken', async () => {
    const { clock, pacer, gate } = setup();
    const a = deployment(provider('a'), 'm');
    // One request becomes possible at +500 ms, then none until the minute resets.
    pacer.observe(a, {
      'retry-after-ms': '500',
      'x-ratelimit-remaining-requests': '1',
      'x-ratelimit-reset-requests': '60s',
    });
    const first = track(gate.wait([a], 1, 2000));
    const second = track(gate.wait([a], 1, 2000));
    await clock.advance(500);
    expect(first.value).toMatchObject({ ok: true, dep: a, waitedMs: 500 });
    expect(second.value).toEqual({ ok: false, reason: 'timed_out', retryAfterMs: 59_500, waitedMs: 500 });
    expect(clock.pending).toBe(0);
  });

  it('overflows immediately past the waiter bound', async () => {
    const { pacer, gate } = setup(2);
    const a = deployment(provider('a'), 'm');
    pacer.observe(a, { 'retry-after-ms': '1000' });
    void gate.wait([a], 1, 2000);
    void gate.wait([a], 1, 2000);
    const r = await gate.wait([a], 1, 2000);
    expect(r).toEqual({ ok: false, reason: 'overflow', retryAfterMs: 1000, waitedMs: 0 });
    expect(gate.size).toBe(2);
  });

  it('stops waiting when the signal aborts, and leaves no timer behind', async () => {
    const { clock, pacer, gate } = setup();
    const a = deployment(provider('a'), 'm');
    pacer.observe(a, { 'retry-after-ms': '1000' });
    const ac = new AbortController();
    const r = track(gate.wait([a], 1, 2000, ac.signal));
    await clock.advance(100);
    ac.abort(new Error('client gone'));
    await clock.advance(0);
    expect((r.error as Error).message).toBe('client gone');
    expect(gate.size).toBe(0);
    expect(clock.pending).toBe(0);
    // Capacity at +1000 is not taken by the aborted waiter.
    await clock.advance(900);
    expect(isThrottled(pacer.tryAcquire(a, 1))).toBe(false);
  });

  it('rejects at once for an already aborted signal', async () => {
    const { gate } = setup();
    const ac = new AbortController();
    ac.abort(new Error('gone'));
    await expect(gate.wait([deployment(provider('a'), 'm')], 1, 2000, ac.signal)).rejects.toThrow('gone');
  });

  it('re-checks when capacity is given back early', async () => {
    const { clock, pacer, gate } = setup();
    const a = deployment(provider('a', { tpm: 1000 }), 'm');
    const held = pacer.tryAcquire(a, 1000);
    if (isThrottled(held)) throw new Error('unexpected');
    const r = track(gate.wait([a], 500, 70_000));
    await clock.advance(10);
    expect(r.value).toBeUndefined();
    held.reconcile(200); // used far less than estimated
    await clock.advance(0);
    expect(r.value).toMatchObject({ ok: true, dep: a, waitedMs: 10 });
  });

  it('does not wake every waiter for every refill (no thundering herd)', async () => {
    const { clock, pacer, gate } = setup();
    const a = deployment(provider('a', { rpm: 60 }), 'm'); // burst 10, then one per second
    for (let i = 0; i < 10; i++) pacer.tryAcquire(a, 1);
    const checks = vi.spyOn(pacer, 'acquireFirst');
    const n = 40;
    const results: { value?: GateResult }[] = [];
    for (let i = 0; i < n; i++) results.push(track(gate.wait([deployment(provider('a', { rpm: 60 }), 'm')], 1, 60_000)));
    await clock.advance(n * 1000);
    // Served one per second, in arrival order.
    results.forEach((r, i) => expect(r.value).toMatchObject({ ok: true, waitedMs: (i + 1) * 1000 }));
    // One check each on arrival, then at most two per refill: the served waiter and the next in line.
    expect(checks.mock.calls.length).toBeLessThanOrEqual(n + 2 * n);
  });

  describe('due waiters before newcomers (serveDue)', () => {
    /** One request possible at +500 ms, then none until the minute resets. */
    const oneAt500 = { 'retry-after-ms': '500', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '60s' };

    it('serves a waiter whose timer is late before a request arriving meanwhile', async () => {
      // Timers that never fire: the event loop is busy past the waiter's due time.
      let t = Date.UTC(2026, 0, 1);
      const clock = { now: () => t, setTimer: () => ({ clear() {}, refresh() {} }), sleep: () => Promise.resolve() };
      const pacer = new Pacer({ limits: { defaultRpm: null } }, clock);
      const gate = new WaitGate(pacer, clock);
      const a = deployment(provider('a'), 'm');
      pacer.observe(a, oneAt500);
      const first = track(gate.wait([a], 1, 2000));
      t += 600;
      const late = await gate.wait([a], 1, 2000);
      await Promise.resolve();
      expect(first.value).toMatchObject({ ok: true, dep: a, waitedMs: 600 });
      expect(late).toMatchObject({ ok: false });
    });

    it('serves a waiter woken by a release before a request arriving in the same tick', async () => {
      const { clock, pacer, gate } = setup();
      const a = deployment(provider('a', { rpm: 1 }), 'm');
      const held = pacer.tryAcquire(a, 1);
      if (isThrottled(held)) throw new Error('unexpected');
      const first = track(gate.wait([a], 1, 70_000));
      await clock.advance(10);
      held.cancel(); // never sent: the request is free again, for the waiter
      const late = await gate.wait([a], 1, 0);
      expect(first.value).toMatchObject({ ok: true, dep: a, waitedMs: 10 });
      expect(late).toMatchObject({ ok: false, reason: 'beyond_budget' });
      expect(clock.pending).toBe(0);
    });

    it('costs one comparison when nobody is due', () => {
      const { clock, pacer, gate } = setup();
      const pass = vi.spyOn(gate as unknown as { pass(): void }, 'pass');
      gate.serveDue(clock.now());
      pacer.observe(deployment(provider('a'), 'm'), oneAt500);
      void gate.wait([deployment(provider('a'), 'm')], 1, 2000);
      gate.serveDue(clock.now() + 499);
      expect(pass).not.toHaveBeenCalled();
    });
  });
});
