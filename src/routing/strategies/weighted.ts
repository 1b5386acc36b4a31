/**
 * Weighted random order without replacement (Efraimidis–Spirakis keys): the
 * first pick follows the weights, and the rest of the pool follows as the
 * fail-over order. O(n log n) on pools that are a handful long.
 */
import type { Random } from '../../core/clock.js';
import type { Deployment } from '../deployment.js';
import type { Selector } from './types.js';

export const weighted: Selector = (pool: readonly Deployment[], random: Random) => {
  const n = pool.length;
  if (n <= 1) return { ordered: pool, reason: 'weighted' };
  // Key log(u)/w orders exactly as u^(1/w) does (log is monotonic) and costs a
  // log instead of a pow; an insertion sort in place of objects and a comparator
  // (this runs on every request).
  const keys = new Array<number>(n);
  const ordered = new Array<Deployment>(n);
  for (let i = 0; i < n; i++) {
    const d = pool[i]!;
    const k = Math.log(random()) / Math.max(d.weight, 1e-9);
    let j = i;
    for (; j > 0 && keys[j - 1]! < k; j--) {
      keys[j] = keys[j - 1]!;
      ordered[j] = ordered[j - 1]!;
    }
    keys[j] = k;
    ordered[j] = d;
  }
  return { ordered, reason: 'weighted' };
};
