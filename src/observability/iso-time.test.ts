import { describe, expect, it } from 'vitest';
import { isoTime, isoTimeMs } from './iso-time.js';

const times = (t: number) => [t, t, t + 1, t + 2, t + 3, t + 1, t - 1000, 0, 1, 999, 1000, -1, -1001, t + 86_400_000, 4102444799999, 1.7, 253402300800123];

describe('isoTime', () => {
  it('formats epoch ms as Date#toISOString does, across seconds, back and forth', () => {
    for (const ms of times(Date.UTC(2026, 10, 30, 4, 30, 59, 998))) expect(isoTime(ms)).toBe(new Date(Math.floor(ms)).toISOString());
  });
});

describe('isoTimeMs', () => {
  it('reads back what isoTime wrote, in any order', () => {
    for (const ms of times(Date.UTC(2026, 10, 30, 4, 30, 59, 998))) expect(isoTimeMs(isoTime(ms))).toBe(Math.floor(ms));
  });

  it('reads the same text made elsewhere (not the string isoTime returned last)', () => {
    const ms = Date.UTC(2026, 10, 30, 4, 30, 59, 998);
    isoTime(ms + 5000);
    for (const t of times(ms)) expect(isoTimeMs(new Date(Math.floor(t)).toISOString())).toBe(Math.floor(t));
  });

  it('is NaN for any text isoTime would not write, even near a cached second', () => {
    isoTimeMs('2026-11-30T04:30:59.000Z');
    for (const s of ['2026-11-30T04:30:59.1Z', '2026-11-30T04:30:59.12aZ', '2026-11-30T04:30:59.123+00:00', '2026-11-30T04:30:59Z', '2026-11-30', 'nope', '', '2026-11-30T04:30:59.123z']) {
      expect(isoTimeMs(s), s).toBeNaN();
    }
  });
});
