/**
 * Strategy registry. `weighted` and `cost` are implemented; the
 * observation-driven ones (latency, ttft, throughput, least-busy, usage) need
 * the selection issue's live statistics and order by weight until then, saying
 * so in the selection reason rather than pretending.
 */
import type { Strategy } from '../../config/types.js';
import { cost } from './cost.js';
import type { Selector } from './types.js';
import { weighted } from './weighted.js';

/** Strategies that need live observations not gathered yet: they order by weight, and say so (config warnings name them). */
export const PENDING_STRATEGIES: ReadonlySet<Strategy> = new Set<Strategy>(['latency', 'ttft', 'throughput', 'least-busy', 'usage']);

function pending(name: string): Selector {
  return (pool, random) => ({ ordered: weighted(pool, random).ordered, reason: `weighted (${name} pending)` });
}

export const SELECTORS: Record<Strategy, Selector> = {
  weighted,
  cost,
  latency: pending('latency'),
  ttft: pending('ttft'),
  throughput: pending('throughput'),
  'least-busy': pending('least-busy'),
  usage: pending('usage'),
};

export type { Selector } from './types.js';
