import { describe, expect, it } from 'vitest';
import { isoTime } from './run.js';

describe('isoTime', () => {
  it('formats epoch ms as ISO 8601, the same for repeats and right after a change', () => {
    const t = Date.UTC(2026, 10, 30, 4, 30, 0, 123);
    expect(isoTime(t)).toBe('2026-11-30T04:30:00.123Z');
    expect(isoTime(t)).toBe('2026-11-30T04:30:00.123Z');
    expect(isoTime(t + 1)).toBe('2026-11-30T04:30:00.124Z');
    expect(isoTime(t)).toBe('2026-11-30T04:30:00.123Z');
  });
});
