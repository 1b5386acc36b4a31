import { describe, expect, it } from 'vitest';
import { TokenWindow } from './token-window.js';

const T0 = Date.UTC(2026, 0, 1); // a whole second

describe('TokenWindow', () => {
  it('admits up to the limit in a minute, then says when the oldest second expires', () => {
    const w = new TokenWindow(100);
    expect(w.waitMs(60, T0 + 500)).toBe(0);
    w.reserve(60, T0 + 500);
    expect(w.waitMs(40, T0 + 500)).toBe(0);
    // Reserved inside second 0: released at the end of second 60.
    expect(w.waitMs(50, T0 + 500)).toBe(60_500);
    expect(w.used(T0 + 60_999)).toBe(60);
    expect(w.used(T0 + 61_000)).toBe(0);
  });

  it('rolls: only the seconds that have aged out are released', () => {
    const w = new TokenWindow(100);
    w.reserve(40, T0);
    w.reserve(40, T0 + 30_000);
    // 50 more needs 30 freed: the first slot, at T0 + 61 s.
    expect(w.waitMs(50, T0 + 30_000)).toBe(31_000);
    expect(w.used(T0 + 61_000)).toBe(40);
    expect(w.waitMs(50, T0 + 61_000)).toBe(0);
    // 70 more needs both slots gone.
    w.reserve(10, T0 + 61_000);
    expect(w.waitMs(70, T0 + 61_000)).toBe(30_000);
  });

  it('reconciles an estimate to the actual usage, never below zero and not after expiry', () => {
    const w = new TokenWindow(1000);
    w.reserve(800, T0 + 100);
    w.adjust(T0 + 100, -650, T0 + 2000);
    expect(w.used(T0 + 2000)).toBe(150);
    w.adjust(T0 + 100, +50, T0 + 2000);
    expect(w.used(T0 + 2000)).toBe(200);
    w.adjust(T0 + 100, -5000, T0 + 2000);
    expect(w.used(T0 + 2000)).toBe(0);
    w.reserve(300, T0 + 3000);
    w.adjust(T0 + 3000, +100, T0 + 70_000); // expired: ignored
    expect(w.used(T0 + 70_000)).toBe(0);
  });

  it('lets a single oversized reservation through only once the window is empty', () => {
    const w = new TokenWindow(100);
    expect(w.waitMs(500, T0)).toBe(0);
    w.reserve(1, T0 + 10_000);
    expect(w.waitMs(500, T0 + 10_000)).toBe(61_000);
  });

  it('forgets everything after a long idle gap (ring reuse is safe)', () => {
    const w = new TokenWindow(10);
    w.reserve(10, T0);
    const later = T0 + 61_000 * 7 + 123;
    expect(w.used(later)).toBe(0);
    w.reserve(10, later);
    expect(w.waitMs(1, later)).toBeGreaterThan(59_000);
    expect(w.used(later + 61_000)).toBe(0);
  });

  it('holds a full rolling minute across the ring wrap-around', () => {
    const w = new TokenWindow(1_000_000);
    for (let s = 0; s < 200; s++) w.reserve(1, T0 + s * 1000);
    // At second 199, seconds 139..199 are live.
    expect(w.used(T0 + 199_000)).toBe(61);
  });
});
