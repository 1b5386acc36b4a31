import { describe, expect, it } from 'vitest';
import { isoTime } from './run.js';

describe('isoTime', () => {
  it('formats epoch ms as Date#toISOString does, across seconds, back and forth', () => {
    const t = Date.UTC(2026, 10, 30, 4, 30, 59, 998);
    for (const ms of [t, t, t + 1, t + 2, t + 3, t + 1, t - 1000, 0, 1, 999, 1000, t + 86_400_000, 4102444799999, 1.7]) {
      expect(isoTime(ms)).toBe(new Date(Math.floor(ms)).toISOString());
    }
    // Years past 9999 have a longer prefix.
    expect(isoTime(253402300800123)).toBe(new Date(253402300800123).toISOString());
  });
});
