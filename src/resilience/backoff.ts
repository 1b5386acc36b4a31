/**
 * Exponential backoff with full jitter (AWS architecture blog's "full jitter"):
 * the delay is uniform in [0, min(maxMs, baseMs * 2^attempt)], so a fleet of
 * clients retrying the same failure spreads out instead of stampeding.
 */
import type { BackoffConfig } from '../config/types.js';
import type { Random } from '../core/clock.js';

/** `attempt` is 0 for the first retry. */
export function backoffDelay(attempt: number, cfg: BackoffConfig, random: Random): number {
  const ceiling = Math.min(cfg.maxMs, cfg.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}
