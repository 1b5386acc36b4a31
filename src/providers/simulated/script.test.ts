import { describe, expect, it } from 'vitest';
import { FaultScript, type Plan } from './script.js';
import { seededRandom } from '../../core/clock.js';
import type { FaultRule } from '../../config/types.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';

const never = (): number => {
  throw new Error('random() must not be drawn');
};

function rule(r: Partial<FaultRule> & Pick<FaultRule, 'kind'>): FaultRule {
  return { probability: 1, ...r };
}

describe('FaultScript', () => {
  it('answers ok without rules, and draws no random number for certain rules', () => {
    const clock = new VirtualClock();
    expect(new FaultScript({ faults: [] }, clock, never).decide()).toEqual({ kind: 'ok', extraDelayMs: 0 });
    const s = new FaultScript({ faults: [rule({ kind: 'reset' })] }, clock, never);
    expect(s.decide()).toEqual({ kind: 'reset' });
    const off = new FaultScript({ faults: [rule({ kind: 'reset', probability: 0 })] }, clock, never);
    expect(off.decide()).toEqual({ kind: 'ok', extraDelayMs: 0 });
  });

  it('clear() drops queued plans: the rules answer again', () => {
    const s = new FaultScript({ faults: [] }, new VirtualClock(), never);
    s.enqueue({ kind: 'reset' }, { kind: 'reset' });
    expect(s.decide()).toEqual({ kind: 'reset' });
    s.clear();
    expect(s.decide()).toEqual({ kind: 'ok', extraDelayMs: 0 });
  });

  it('checks rules in order; slow adds delay and keeps looking', () => {
    const clock = new VirtualClock();
    const slowOnly = new FaultScript({ faults: [rule({ kind: 'slow', delayMs: 100 }), rule({ kind: 'slow', delayMs: 50 })] }, clock, never);
    expect(slowOnly.decide()).toEqual({ kind: 'ok', extraDelayMs: 150 });
    const faults = [
      rule({ kind: 'slow', delayMs: 100 }),
      rule({ kind: 'status', status: 503, message: 'down' }),
      rule({ kind: 'reset' }),
    ];
    expect(new FaultScript({ faults }, clock, never).decide()).toEqual({ kind: 'status', status: 503, message: 'down' });
  });

  it('fills plan defaults from the rule', () => {
    const clock = new VirtualClock();
    const one = (r: FaultRule): Plan => new FaultScript({ faults: [r] }, clock, never).decide();
    expect(one(rule({ kind: 'status' }))).toEqual({ kind: 'status', status: 500 });
    expect(one(rule({ kind: 'stream_abort' }))).toEqual({ kind: 'stream_abort', afterChunks: 1 });
    expect(one(rule({ kind: 'stream_abort', afterChunks: 4 }))).toEqual({ kind: 'stream_abort', afterChunks: 4 });
    expect(one(rule({ kind: 'rate_limit' }))).toEqual({ kind: 'rate_limit' });
    expect(one(rule({ kind: 'rate_limit', retryAfterS: 9 }))).toEqual({ kind: 'rate_limit', retryAfterS: 9 });
    expect(one(rule({ kind: 'hang' }))).toEqual({ kind: 'hang' });
  });

  it('applies a probabilistic rule at its rate, reproducibly for a seed', () => {
    const clock = new VirtualClock();
    const faults = [rule({ kind: 'status', status: 500, probability: 0.3 })];
    const run = (seed: number): string[] => {
      const s = new FaultScript({ faults }, clock, seededRandom(seed));
      return Array.from({ length: 10_000 }, () => s.decide().kind);
    };
    const a = run(42);
    const rate = a.filter((k) => k === 'status').length / a.length;
    expect(rate).toBeGreaterThan(0.28);
    expect(rate).toBeLessThan(0.32);
    expect(run(42)).toEqual(a);
    expect(run(7)).not.toEqual(a);
  });

  it('honours [fromMs, toMs) windows measured from startedAt', async () => {
    const clock = new VirtualClock();
    const s = new FaultScript({ faults: [rule({ kind: 'reset', fromMs: 1000, toMs: 2000 })] }, clock, never);
    const at = async (t: number): Promise<string> => {
      await clock.advance(t - (clock.now() - Date.UTC(2026, 0, 1)));
      return s.decide().kind;
    };
    expect(await at(0)).toBe('ok');
    expect(await at(999)).toBe('ok');
    expect(await at(1000)).toBe('reset');
    expect(await at(1999)).toBe('reset');
    expect(await at(2000)).toBe('ok');

    const late = new FaultScript({ faults: [rule({ kind: 'reset', fromMs: 500 })] }, clock, never, clock.now() - 500);
    expect(late.decide().kind).toBe('reset');
  });

  it('enforces rpmLimit over a rolling minute, with Retry-After until the oldest leaves', async () => {
    const clock = new VirtualClock();
    const s = new FaultScript({ rpmLimit: 3, faults: [] }, clock, never);
    expect(s.decide().kind).toBe('ok'); // t=0
    await clock.advance(10_000);
    expect(s.decide().kind).toBe('ok'); // t=10s
    await clock.advance(10_000);
    expect(s.decide().kind).toBe('ok'); // t=20s
    await clock.advance(10_000);
    expect(s.decide()).toEqual({ kind: 'rate_limit', retryAfterS: 30 }); // oldest leaves at 60s
    await clock.advance(29_500);
    expect(s.decide()).toEqual({ kind: 'rate_limit', retryAfterS: 1 }); // 0.5 s rounds up
    await clock.advance(500);
    expect(s.decide().kind).toBe('ok'); // t=60s: the t=0 request left; rejected ones never counted
    await clock.advance(1000);
    expect(s.decide()).toEqual({ kind: 'rate_limit', retryAfterS: 9 }); // window [10s, 20s, 60s]
  });

  it('puts the free tier in front of the rules', () => {
    const clock = new VirtualClock();
    const s = new FaultScript({ rpmLimit: 1, faults: [rule({ kind: 'status', status: 502 })] }, clock, never);
    expect(s.decide()).toEqual({ kind: 'status', status: 502 });
    expect(s.decide()).toEqual({ kind: 'rate_limit', retryAfterS: 60 });
  });

  it('returns enqueued plans first, in order, outside the free tier', () => {
    const clock = new VirtualClock();
    const s = new FaultScript({ rpmLimit: 1, faults: [] }, clock, never);
    s.enqueue({ kind: 'hang' }, { kind: 'stream_abort', afterChunks: 2 });
    s.enqueue({ kind: 'ok', extraDelayMs: 5 });
    expect(s.decide()).toEqual({ kind: 'hang' });
    expect(s.decide()).toEqual({ kind: 'stream_abort', afterChunks: 2 });
    expect(s.decide()).toEqual({ kind: 'ok', extraDelayMs: 5 });
    // Queued plans were not counted: the one-per-minute allowance is still free.
    expect(s.decide()).toEqual({ kind: 'ok', extraDelayMs: 0 });
    expect(s.decide().kind).toBe('rate_limit');
  });
});
