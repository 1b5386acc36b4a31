/**
 * The real-clock timer lists, on vitest's fake timers (this is the code that
 * talks to setTimeout and Date.now, so those are what must be controlled).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setListTimer } from './timer-list.js';

describe('setListTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires once after its duration, in arming order, and a cleared timer never fires', () => {
    const fired: string[] = [];
    setListTimer(() => fired.push('a'), 1000);
    vi.advanceTimersByTime(300);
    const b = setListTimer(() => fired.push('b'), 1000);
    setListTimer(() => fired.push('c'), 1000);
    b!.clear();
    vi.advanceTimersByTime(699);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['a']);
    vi.advanceTimersByTime(300);
    expect(fired).toEqual(['a', 'c']);
    vi.advanceTimersByTime(5000);
    expect(fired).toEqual(['a', 'c']);
  });

  it('refresh restarts the countdown from now, also after the timer fired', () => {
    let n = 0;
    const t = setListTimer(() => n++, 500)!;
    vi.advanceTimersByTime(400);
    t.refresh();
    vi.advanceTimersByTime(400);
    expect(n).toBe(0);
    vi.advanceTimersByTime(100);
    expect(n).toBe(1);
    t.refresh();
    vi.advanceTimersByTime(500);
    expect(n).toBe(2);
  });

  it('keeps the list going when the head is cleared: the next one fires on time', () => {
    const fired: number[] = [];
    const first = setListTimer(() => fired.push(1), 2000)!;
    vi.advanceTimersByTime(1000);
    setListTimer(() => fired.push(2), 2000);
    first.clear();
    vi.advanceTimersByTime(1999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual([2]);
  });

  it('a throwing callback surfaces, after the others due with it ran and the list stays scheduled', () => {
    const fired: string[] = [];
    setListTimer(() => {
      throw new Error('bug');
    }, 700);
    setListTimer(() => fired.push('same time'), 700);
    vi.advanceTimersByTime(100);
    setListTimer(() => fired.push('later'), 700);
    expect(() => vi.advanceTimersByTime(600)).toThrow('bug');
    expect(fired).toEqual(['same time']);
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['same time', 'later']);
  });

  it('gives up (undefined) on durations beyond its bound of distinct lists', () => {
    const handles = [];
    for (let ms = 10_001; ms < 10_200; ms++) handles.push(setListTimer(() => {}, ms));
    expect(handles.some((h) => h === undefined)).toBe(true);
    for (const h of handles) h?.clear();
  });

  it('makes room for a new duration when one-off durations filled its lists and went idle', () => {
    // The wait gate's computed waits: a distinct duration each, armed then cleared or fired.
    for (let ms = 20_001; ms < 20_200; ms++) setListTimer(() => {}, ms)?.clear();
    const fired: string[] = [];
    // A configured duration first armed later (a fallback deployment's own timeout) still gets a list.
    const h = setListTimer(() => fired.push('late'), 4321);
    expect(h).toBeDefined();
    vi.advanceTimersByTime(4320);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['late']);
  });
});
