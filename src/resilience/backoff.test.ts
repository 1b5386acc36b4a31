import { describe, expect, it } from 'vitest';
import type { BackoffConfig } from '../config/types.js';
import { seededRandom } from '../core/clock.js';
import { backoffDelay } from './backoff.js';

const CFG: BackoffConfig = { baseMs: 200, maxMs: 5000 };
const ALMOST_ONE = 1 - Number.EPSILON;

describe('backoffDelay: full jitter in [0, min(maxMs, baseMs·2^attempt))', () => {
  // attempt → ceiling: 200, 400, 800, 1600, 3200, then capped at 5000.
  const ceilings = [200, 400, 800, 1600, 3200, 5000, 5000, 5000];

  it.each(ceilings.map((c, attempt) => [attempt, c] as const))('attempt %i: ceiling %i', (attempt, ceiling) => {
    expect(backoffDelay(attempt, CFG, () => 0)).toBe(0);
    expect(backoffDelay(attempt, CFG, () => ALMOST_ONE)).toBe(ceiling - 1);
    expect(backoffDelay(attempt, CFG, () => 0.5)).toBe(ceiling / 2);
  });

  it('never exceeds maxMs, even for absurd attempt numbers (no Infinity or NaN)', () => {
    for (const attempt of [10, 31, 64, 1000, Number.MAX_SAFE_INTEGER]) {
      const d = backoffDelay(attempt, CFG, () => ALMOST_ONE);
      expect(d).toBe(4999);
      expect(Number.isFinite(d)).toBe(true);
    }
  });

  it('is an integer number of milliseconds', () => {
    const r = seededRandom(7);
    const all = Array.from({ length: 1000 }, (_, i) => backoffDelay(i % 8, CFG, r));
    expect(all.every(Number.isInteger)).toBe(true);
  });

  it('baseMs 0 disables the wait; maxMs below baseMs caps the first attempt too', () => {
    expect(backoffDelay(3, { baseMs: 0, maxMs: 5000 }, () => ALMOST_ONE)).toBe(0);
    expect(backoffDelay(0, { baseMs: 1000, maxMs: 300 }, () => ALMOST_ONE)).toBe(299);
  });

  it('is roughly uniform over [0, ceiling) with a seeded random', () => {
    const r = seededRandom(20260101);
    const n = 20_000;
    const ceiling = 800; // attempt 2
    const buckets = new Array<number>(10).fill(0);
    let sum = 0;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < n; i++) {
      const d = backoffDelay(2, CFG, r);
      min = Math.min(min, d);
      max = Math.max(max, d);
      buckets[Math.floor((d / ceiling) * 10)]!++;
      sum += d;
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(ceiling);
    // Both ends are reached: the jitter really is "full".
    expect(min).toBeLessThan(10);
    expect(max).toBeGreaterThan(ceiling - 10);
    // Each decile expects 2000 (sd ≈ 42): ±10% is more than six sd of slack.
    for (const b of buckets) expect(Math.abs(b - n / 10)).toBeLessThan(n / 100);
    expect(sum / n).toBeGreaterThan(ceiling / 2 - 10);
    expect(sum / n).toBeLessThan(ceiling / 2 + 10);
  });

  it('spreads a fleet: the same attempt from many clients does not collapse onto one delay', () => {
    const r = seededRandom(99);
    const distinct = new Set(Array.from({ length: 200 }, () => backoffDelay(4, CFG, r)));
    expect(distinct.size).toBeGreaterThan(150);
  });
});
