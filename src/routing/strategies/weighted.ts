/**
 * Weighted random order without replacement (Efraimidis–Spirakis keys): the
 * first pick follows the weights, and the rest of the pool follows as the
 * fail-over order. O(n log n) on pools that are a handful long.
 */
import type { Random } from '../../core/clock.js';
import type { Deployment } from '../deployment.js';
import type { Selector } from './types.js';

export const weighted: Selector = (pool: readonly Deployment[], random: Random) => {
  if (pool.length <= 1) return { ordered: pool, reason: 'weighted' };
  const keyed = pool.map((d) => ({ d, k: Math.pow(random(), 1 / Math.max(d.weight, 1e-9)) }));
  keyed.sort((a, b) => b.k - a.k);
  return { ordered: keyed.map((x) => x.d), reason: 'weighted' };
};
