import { describe, expect, it } from 'vitest';
import { defaultBurst, TokenBucket } from './token-bucket.js';

const T0 = Date.UTC(2026, 0, 1);

describe('defaultBurst', () => {
  it('is one second of the limit, but at least 10 (or the whole limit when smaller)', () => {
    expect(defaultBurst(3)).toBe(3);
    expect(defaultBurst(10)).toBe(10);
    expect(defaultBurst(60)).toBe(10);
    expect(defaultBurst(600)).toBe(10);
    expect(defaultBurst(6000)).toBe(100);
    expect(defaultBurst(90_000)).toBe(1500);
  });
});

describe('TokenBucket', () => {
  it('lets a cold bucket burst only up to its burst, then paces at rpm/60000 per ms', () => {
    const b = new TokenBucket(60); // burst 10, one token per second
    for (let i = 0; i < 10; i++) expect(b.tryTake(T0)).toBe(0);
    expect(b.tryTake(T0)).toBe(1000);
    expect(b.tryTake(T0 + 999)).toBe(1);
    expect(b.tryTake(T0 + 1000)).toBe(0);
    expect(b.tryTake(T0 + 1000)).toBe(1000);
  });

  it('reports the exact wait for a fractional level and does not take on waitMs', () => {
    const b = new TokenBucket(3); // burst 3, one token per 20 s
    b.take(T0);
    b.take(T0);
    b.take(T0);
    expect(b.waitMs(T0 + 5000)).toBe(15_000);
    expect(b.waitMs(T0 + 5000)).toBe(15_000);
    expect(b.available(T0 + 5000)).toBeCloseTo(0.25, 9);
    expect(b.tryTake(T0 + 20_000)).toBe(0);
  });

  it('refills no higher than the burst however long it idles', () => {
    const b = new TokenBucket(60);
    b.take(T0);
    expect(b.available(T0 + 3_600_000)).toBe(10);
  });

  it('gives back a token for an attempt never sent, capped at the burst', () => {
    const b = new TokenBucket(60, 1);
    expect(b.tryTake(T0)).toBe(0);
    expect(b.tryTake(T0)).toBe(1000);
    b.giveBack();
    expect(b.tryTake(T0)).toBe(0);
    b.giveBack();
    b.giveBack();
    expect(b.available(T0)).toBe(1);
  });

  it('never lets the level drift below a whole token after waiting exactly waitMs', () => {
    const b = new TokenBucket(7, 1); // 7/60000 per ms: not a round number
    let now = T0;
    for (let i = 0; i < 50; i++) {
      const w = b.tryTake(now);
      if (w > 0) {
        now += w;
        expect(b.tryTake(now)).toBe(0);
      }
    }
  });

  it('refuses a non-positive rpm', () => {
    expect(() => new TokenBucket(0)).toThrow(RangeError);
  });
});
