/**
 * Time as a dependency. Everything that waits, times out or reads the time takes
 * a Clock, so timelines (backoff, breaker recovery, cooldowns, pacing) can be
 * tested on a virtual clock instead of with sleeps.
 */
import type { Signal } from './signal.js';
import { setListTimer } from './timer-list.js';

export interface TimerHandle {
  /** Cancel the timer; idempotent. */
  clear(): void;
  /** Restart the countdown with the original delay (cheap: no new allocation for the real clock). */
  refresh(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** Resolves after `ms`; rejects with the signal's reason if it aborts first. */
  sleep(ms: number, signal?: Signal): Promise<void>;
}

class RealTimer implements TimerHandle {
  constructor(private readonly t: NodeJS.Timeout) {}
  clear(): void {
    clearTimeout(this.t);
  }
  refresh(): void {
    this.t.refresh();
  }
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const listed = setListTimer(fn, ms);
    if (listed !== undefined) return listed;
    const t = setTimeout(fn, ms);
    t.unref?.();
    return new RealTimer(t);
  },
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      if (ms <= 0) return resolve();
      const onAbort = () => {
        clearTimeout(t);
        reject(signal!.reason);
      };
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

/** A source of randomness in [0, 1), injectable for deterministic tests. */
export type Random = () => number;
export const systemRandom: Random = Math.random;

/**
 * mulberry32: a small, fast PRNG; the same seed always yields the same sequence in [0, 1).
 * For what must repeat: simulated embeddings, and tests' reproducible draws.
 */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
