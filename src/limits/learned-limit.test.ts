import { describe, expect, it } from 'vitest';
import { LearnedLimit } from './learned-limit.js';

const T0 = Date.UTC(2026, 0, 1);

describe('LearnedLimit', () => {
  it('constrains nothing until something is observed', () => {
    expect(new LearnedLimit().waitMs(1_000_000, T0)).toBe(0);
  });

  it('without a known limit, waits for the reset and then expires', () => {
    const l = new LearnedLimit();
    l.observe(0, T0 + 5000, 0, T0);
    expect(l.waitMs(1, T0)).toBe(5000);
    expect(l.waitMs(1, T0 + 4999)).toBe(1);
    expect(l.active(T0 + 5000)).toBe(false);
    expect(l.waitMs(1, T0 + 5000)).toBe(0);
  });

  it('with a known limit, refills linearly to it by the reset', () => {
    const l = new LearnedLimit();
    l.observe(0, T0 + 60_000, 0, T0, 60); // one per second
    expect(l.waitMs(1, T0)).toBe(1000);
    expect(l.waitMs(1, T0 + 1000)).toBe(0);
    l.take(1, T0 + 1000);
    expect(l.waitMs(1, T0 + 1000)).toBe(1000);
  });

  it('counts what is in flight against what the upstream reported', () => {
    const l = new LearnedLimit();
    l.observe(3, T0 + 10_000, 3, T0);
    expect(l.waitMs(1, T0)).toBe(10_000);
    l.observe(3, T0 + 10_000, 2, T0);
    expect(l.waitMs(1, T0)).toBe(0);
  });

  it('gives back only into the observation it was taken from', () => {
    const l = new LearnedLimit();
    l.observe(1, T0 + 10_000, 0, T0);
    const epoch = l.epoch;
    l.take(1, T0);
    expect(l.waitMs(1, T0)).toBe(10_000);
    l.giveBack(1, epoch, T0);
    expect(l.waitMs(1, T0)).toBe(0);
    l.take(1, T0);
    l.observe(0, T0 + 10_000, 0, T0);
    l.giveBack(1, epoch, T0);
    expect(l.waitMs(1, T0)).toBe(10_000);
  });

  it('ignores an observation whose reset has already passed', () => {
    const l = new LearnedLimit();
    l.observe(0, T0 - 1, 0, T0);
    expect(l.waitMs(1, T0)).toBe(0);
  });
});
