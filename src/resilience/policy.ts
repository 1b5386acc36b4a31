/**
 * What to do after a failed attempt: one pure function of (error, retries
 * already spent on this candidate, config, random) — the whole retry table of
 * the resilience issue in one place.
 */
import type { ResilienceConfig } from '../config/types.js';
import type { Random } from '../core/clock.js';
import { backoffDelay } from './backoff.js';
import { refusedByThisModel } from './classify.js';
import type { UpstreamError } from './upstream-error.js';

export type NextStep =
  /** Try the same candidate again after `delayMs`. */
  | 'retry'
  /** Move on to the next candidate in the chain. */
  | 'failover'
  /** Move on only to candidates with a larger (or unknown) context window. */
  | 'failover_larger_context'
  /** Move on only to the alias's contentPolicyFallbacks. */
  | 'failover_content_policy'
  /** Stop: the client gets this error. */
  | 'fail';

export interface Decision {
  next: NextStep;
  delayMs: number;
  /** Take the deployment out of rotation for this long (0: no cooldown). */
  cooldownMs: number;
  /** How the outcome counts for the circuit breaker. */
  breaker: 'failure' | 'success' | 'neutral';
  /**
   * The cooldown is a rate limit's short wait (within throttleMaxWaitMs): pacing can hold the
   * deployment for it instead, and a request with no other candidate waits it out (executor.ts).
   */
  throttle?: true;
}

/** `pinned`: the request named this deployment itself (`PROVIDER_ID/MODEL`) rather than an alias or `auto`. */
export function decide(err: UpstreamError, retriesUsed: number, cfg: ResilienceConfig, random: Random, pinned = false): Decision {
  const canRetry = retriesUsed < cfg.maxRetries;
  switch (err.category) {
    case 'server':
    case 'overloaded':
    case 'network': {
      // A 503 with Retry-After says when to come back: honour it when short, cool down for it when not.
      const ra = err.retryAfterMs;
      if (!canRetry) return { next: 'failover', delayMs: 0, cooldownMs: ra ?? 0, breaker: 'failure' };
      const delay = ra !== undefined && ra <= cfg.maxRetryAfterWaitMs ? Math.max(ra, backoffDelay(retriesUsed, cfg.backoff, random)) : backoffDelay(retriesUsed, cfg.backoff, random);
      if (ra !== undefined && ra > cfg.maxRetryAfterWaitMs) return { next: 'failover', delayMs: 0, cooldownMs: ra, breaker: 'failure' };
      return { next: 'retry', delayMs: delay, cooldownMs: 0, breaker: 'failure' };
    }
    case 'rate_limited': {
      const ra = err.retryAfterMs;
      if (ra !== undefined && ra <= cfg.maxRetryAfterWaitMs && canRetry) {
        // Short and explicit: wait it out here, and let concurrent requests skip it meanwhile (or,
        // when as short as a throttle, wait for it as for one rather than be refused).
        if (ra > 0 && ra <= cfg.throttleMaxWaitMs) return { next: 'retry', delayMs: ra, cooldownMs: ra, breaker: 'neutral', throttle: true };
        return { next: 'retry', delayMs: ra, cooldownMs: ra, breaker: 'neutral' };
      }
      // Short but not retried here (no retry left): no longer than a wait for local capacity.
      if (ra !== undefined && ra <= cfg.throttleMaxWaitMs) return { next: 'failover', delayMs: 0, cooldownMs: Math.max(ra, 1), breaker: 'neutral', throttle: true };
      // Long or missing: cool down (never zero by default) and move on.
      return { next: 'failover', delayMs: 0, cooldownMs: Math.max(ra ?? cfg.cooldownMs, 1), breaker: 'neutral' };
    }
    case 'timeout':
      // Retrying a silent route only multiplies the wait: fail over at once.
      return { next: 'failover', delayMs: 0, cooldownMs: 0, breaker: 'failure' };
    case 'auth':
      // Misconfigured deployment: no retry, out of rotation for a while.
      return { next: 'failover', delayMs: 0, cooldownMs: cfg.cooldownMs, breaker: 'neutral' };
    case 'not_found':
      // In a pool, the deployment names a model its upstream lacks: a configuration fault, out of
      // rotation like bad credentials (not a breaker failure: the upstream itself is fine). A pin
      // is the client's own name for a model: the 404 is its answer, and says nothing about the provider.
      if (pinned) return { next: 'fail', delayMs: 0, cooldownMs: 0, breaker: 'neutral' };
      return { next: 'failover', delayMs: 0, cooldownMs: cfg.cooldownMs, breaker: 'neutral' };
    case 'invalid_request':
      // A parameter this model does not take (a reasoning model given `max_tokens`): the next one
      // may take it. If none does, the chain's answer is the first such refusal (executor.ts).
      if (refusedByThisModel(err)) return { next: 'failover', delayMs: 0, cooldownMs: 0, breaker: 'success' };
      return { next: 'fail', delayMs: 0, cooldownMs: 0, breaker: 'success' };
    case 'context_length':
      return { next: 'failover_larger_context', delayMs: 0, cooldownMs: 0, breaker: 'success' };
    case 'content_policy':
      return { next: 'failover_content_policy', delayMs: 0, cooldownMs: 0, breaker: 'success' };
  }
}
