/**
 * Cheapest first by input + output price (USD per 1M tokens), unpriced last,
 * ties in pool order. Prices are fixed at start-up, so a pool is sorted once
 * and its order kept on the pool itself (a property read per request, as the
 * candidate cache in chain.ts; not enumerable, so a spread copy does not share it).
 */
import type { Deployment } from '../deployment.js';
import type { Selector } from './types.js';

const kByCost = Symbol('switchyard.byCost');
type CostPool = readonly Deployment[] & { [kByCost]?: readonly Deployment[] };

const price = (d: Deployment): number => (d.price ? d.price.input + d.price.output : Number.POSITIVE_INFINITY);

export const cost: Selector = (pool: CostPool) => {
  let ordered = pool[kByCost];
  if (ordered === undefined) {
    ordered = [...pool].sort((a, b) => price(a) - price(b));
    if (Object.isExtensible(pool)) Object.defineProperty(pool, kByCost, { value: ordered });
  }
  return { ordered, reason: 'cost' };
};
