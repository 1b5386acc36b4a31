import { beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import { parseConfig } from '../config/parse.js';
import type { ResilienceConfig } from '../config/types.js';
import { EventBus, type BreakerEvent, type CooldownEvent } from '../observability/events.js';
import { Health } from './health.js';

const CFG: ResilienceConfig = parseConfig({
  providers: [{ id: 'sim', type: 'simulated' }],
  resilience: { breaker: { failureThreshold: 2, recoveryMs: 1000, halfOpenProbes: 1 } },
}).resilience;

const A = 'oa/gpt-4o-mini';
const B = 'an/claude';

let clock: VirtualClock;
let bus: EventBus;
let health: Health;
let breakerEvents: BreakerEvent[];
let cooldownEvents: CooldownEvent[];
let t0: number;

beforeEach(() => {
  clock = new VirtualClock();
  bus = new EventBus();
  breakerEvents = [];
  cooldownEvents = [];
  bus.on('breaker', (e) => breakerEvents.push(e));
  bus.on('cooldown', (e) => cooldownEvents.push(e));
  health = new Health(CFG, clock, bus);
  t0 = clock.now();
});

describe('Health: unknown deployments', () => {
  it('are closed, available and due now, and admitting one emits nothing', () => {
    expect(health.state(A)).toBe('closed');
    expect(health.available(A)).toBe(true);
    expect(health.retryAt(A)).toBe(0);
    expect(health.admit(A)).toEqual({ ok: true, probe: false });
    expect(breakerEvents).toEqual([]);
  });
});

describe('Health: cooldown', () => {
  it('blocks admission until its end, reporting when, and emits one cooldown event', async () => {
    health.cooldown(A, 5000, 'rate_limited');
    expect(cooldownEvents).toEqual([{ deployment: A, untilMs: t0 + 5000, reason: 'rate_limited' }]);
    expect(health.admit(A)).toEqual({ ok: false, reason: 'cooldown', retryAt: t0 + 5000 });
    expect(health.available(A)).toBe(false);
    expect(health.retryAt(A)).toBe(t0 + 5000);
    expect(health.available(B)).toBe(true);

    await clock.advance(4999);
    expect(health.admit(A)).toEqual({ ok: false, reason: 'cooldown', retryAt: t0 + 5000 });
    await clock.advance(1);
    expect(health.available(A)).toBe(true);
    expect(health.admit(A)).toEqual({ ok: true, probe: false });
  });

  it('only ever extends: a shorter cooldown neither shortens it nor emits', async () => {
    health.cooldown(A, 60_000, 'auth');
    await clock.advance(1000);
    health.cooldown(A, 2000, 'rate_limited');
    expect(cooldownEvents).toHaveLength(1);
    expect(health.retryAt(A)).toBe(t0 + 60_000);
    health.cooldown(A, 120_000, 'rate_limited');
    expect(cooldownEvents.at(-1)).toEqual({ deployment: A, untilMs: t0 + 1000 + 120_000, reason: 'rate_limited' });
    expect(health.retryAt(A)).toBe(t0 + 121_000);
  });

  it('does not touch the breaker', () => {
    health.cooldown(A, 5000, 'auth');
    expect(health.state(A)).toBe('closed');
    expect(breakerEvents).toEqual([]);
  });
});

describe('Health: breaker transitions on the event bus', () => {
  it('settle: an idle open circuit past its recovery time reads half-open, with its event; one not yet due stays open (found by a soak)', async () => {
    for (const k of [A, A, B]) health.failure(k, false);
    await clock.advance(500);
    health.failure(B, false); // B opens 500 ms after A
    health.settle();
    expect([health.state(A), health.state(B)]).toEqual(['open', 'open']);
    await clock.advance(600);
    health.settle();
    expect([health.state(A), health.state(B)]).toEqual(['half_open', 'open']);
    expect(breakerEvents.at(-1)).toEqual({ deployment: A, from: 'open', to: 'half_open', at: t0 + 1100 });
    health.settle(); // once
    expect(breakerEvents.filter((e) => e.to === 'half_open')).toHaveLength(1);
    // The probe is still there for the next request.
    expect(health.admit(A)).toEqual({ ok: true, probe: true });
  });

  it('closed → open after failureThreshold failures, at the clock time', async () => {
    health.failure(A, false);
    expect(breakerEvents).toEqual([]);
    await clock.advance(10);
    health.failure(A, false);
    expect(breakerEvents).toEqual([{ deployment: A, from: 'closed', to: 'open', at: t0 + 10 }]);
    expect(health.state(A)).toBe('open');
    expect(health.state(B)).toBe('closed');
  });

  it('open rejects with retryAt = openedAt + recoveryMs; then a probe, half-open, closed', async () => {
    health.failure(A, false);
    health.failure(A, false);
    expect(health.admit(A)).toEqual({ ok: false, reason: 'circuit_open', retryAt: t0 + 1000 });
    expect(health.available(A)).toBe(false);
    expect(health.retryAt(A)).toBe(t0 + 1000);

    await clock.advance(1000);
    expect(health.available(A)).toBe(true);
    expect(health.admit(A)).toEqual({ ok: true, probe: true });
    expect(breakerEvents.at(-1)).toEqual({ deployment: A, from: 'open', to: 'half_open', at: t0 + 1000 });

    // One probe at a time: the next caller is told to come back (never "now").
    const second = health.admit(A);
    expect(second).toEqual({ ok: false, reason: 'circuit_open', retryAt: t0 + 1001 });
    expect(health.available(A)).toBe(false);

    await clock.advance(50);
    health.success(A, true);
    expect(breakerEvents.at(-1)).toEqual({ deployment: A, from: 'half_open', to: 'closed', at: t0 + 1050 });
    expect(health.admit(A)).toEqual({ ok: true, probe: false });
    expect(breakerEvents.map((e) => `${e.from}>${e.to}`)).toEqual(['closed>open', 'open>half_open', 'half_open>closed']);
  });

  it('a failed probe re-opens it from the probe time', async () => {
    health.failure(A, false);
    health.failure(A, false);
    await clock.advance(1000);
    expect(health.admit(A)).toEqual({ ok: true, probe: true });
    await clock.advance(200);
    health.failure(A, true);
    expect(breakerEvents.at(-1)).toEqual({ deployment: A, from: 'half_open', to: 'open', at: t0 + 1200 });
    expect(health.admit(A)).toEqual({ ok: false, reason: 'circuit_open', retryAt: t0 + 2200 });
  });

  it('release gives the probe slot back without a transition', async () => {
    health.failure(A, false);
    health.failure(A, false);
    await clock.advance(1000);
    const probe = health.admit(A);
    expect(probe).toEqual({ ok: true, probe: true });
    expect(health.admit(A).ok).toBe(false);
    const before = breakerEvents.length;
    health.release(A, true);
    expect(breakerEvents).toHaveLength(before);
    expect(health.state(A)).toBe('half_open');
    expect(health.admit(A)).toEqual({ ok: true, probe: true });
  });

  it('a cooldown is reported before an open circuit', async () => {
    health.failure(A, false);
    health.failure(A, false);
    health.cooldown(A, 5000, 'rate_limited');
    expect(health.admit(A)).toEqual({ ok: false, reason: 'cooldown', retryAt: t0 + 5000 });
    expect(health.retryAt(A)).toBe(t0 + 5000);
    await clock.advance(5000);
    // Recovery (1 s) passed long ago: the first admission after the cooldown is the probe.
    expect(health.admit(A)).toEqual({ ok: true, probe: true });
  });

  it('a throwing listener never breaks the caller', () => {
    bus.on('breaker', () => {
      throw new Error('listener bug');
    });
    health.failure(A, false);
    expect(() => health.failure(A, false)).not.toThrow();
    expect(health.state(A)).toBe('open');
  });
});

describe('a request that waited out its own Retry-After', () => {
  it('is admitted through the cooldown it set, while others still see it', () => {
    const clock = new VirtualClock(0);
    const h = new Health(parseConfig({ providers: [{ id: 'p', type: 'simulated' }] }, {}).resilience, clock, new EventBus());
    h.cooldown('p/m', 1000, 'rate_limited');
    expect(h.admit('p/m')).toMatchObject({ ok: false, reason: 'cooldown' });
    expect(h.admit('p/m', true)).toMatchObject({ ok: true });
  });
});
