import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../config/defaults.js';
import { parseConfig } from '../config/parse.js';
import type { ResilienceConfig } from '../config/types.js';
import { decide, type Decision } from './policy.js';
import { UpstreamError, type ErrorCategory } from './upstream-error.js';

// The real schema's defaults, made explicit here so the expected delays read plainly.
const CFG: ResilienceConfig = parseConfig({
  providers: [{ id: 'sim', type: 'simulated' }],
  resilience: { maxRetries: 2, backoff: { baseMs: 200, maxMs: 5000 }, cooldownMs: 60_000, maxRetryAfterWaitMs: 5000 },
}).resilience;

/** random() = 0.5 → the full-jitter delay is exactly half its ceiling: 100 ms, then 200 ms. */
const HALF = () => 0.5;
const backoff = (retriesUsed: number) => Math.floor(0.5 * Math.min(5000, 200 * 2 ** retriesUsed));

const SHORT = 3000; // ≤ maxRetryAfterWaitMs
const LONG = 10_000; // > maxRetryAfterWaitMs

type RA = 'missing' | 'short' | 'long';
const RA_MS: Record<RA, number | undefined> = { missing: undefined, short: SHORT, long: LONG };

function err(category: ErrorCategory, ra: RA): UpstreamError {
  return new UpstreamError({ category, message: category, retryAfterMs: RA_MS[ra] });
}

const d = (next: Decision['next'], delayMs: number, cooldownMs: number, breaker: Decision['breaker']): Decision => ({
  next,
  delayMs,
  cooldownMs,
  breaker,
});

/**
 * The whole table: category × retries left (0 used / 1 used) or exhausted (2 used) × Retry-After.
 * Reading down a category is reading the sentence for it.
 */
function expected(category: ErrorCategory, retriesUsed: number, ra: RA): Decision {
  const left = retriesUsed < CFG.maxRetries;
  switch (category) {
    // Retry the same candidate with backoff (a short Retry-After stretches the wait),
    // a long Retry-After cools it down and fails over, and once out of retries: fail over,
    // cooling down for whatever Retry-After said.
    case 'server':
    case 'overloaded':
    case 'network':
      if (!left) return d('failover', 0, ra === 'missing' ? 0 : RA_MS[ra]!, 'failure');
      if (ra === 'long') return d('failover', 0, LONG, 'failure');
      if (ra === 'short') return d('retry', Math.max(SHORT, backoff(retriesUsed)), 0, 'failure');
      return d('retry', backoff(retriesUsed), 0, 'failure');
    // A short Retry-After is waited out (and covers concurrent requests by a cooldown);
    // a long or missing one cools the deployment down and fails over. Not a breaker failure.
    case 'rate_limited':
      if (ra === 'short' && left) return d('retry', SHORT, SHORT, 'neutral');
      if (ra === 'missing') return d('failover', 0, CFG.cooldownMs, 'neutral');
      return d('failover', 0, RA_MS[ra]!, 'neutral');
    case 'timeout':
      return d('failover', 0, 0, 'failure');
    // A deployment that cannot serve (bad credentials, a model its upstream lacks): out of
    // rotation for cooldownMs, no retry, not a breaker failure.
    case 'auth':
    case 'not_found':
      return d('failover', 0, CFG.cooldownMs, 'neutral');
    case 'invalid_request':
      return d('fail', 0, 0, 'success');
    case 'context_length':
      return d('failover_larger_context', 0, 0, 'success');
    case 'content_policy':
      return d('failover_content_policy', 0, 0, 'success');
  }
}

const CATEGORIES: ErrorCategory[] = [
  'rate_limited',
  'overloaded',
  'server',
  'timeout',
  'network',
  'auth',
  'not_found',
  'invalid_request',
  'context_length',
  'content_policy',
];
const ROWS = CATEGORIES.flatMap((c) =>
  [0, 1, 2].flatMap((used) => (['missing', 'short', 'long'] as RA[]).map((ra) => [c, used, ra] as const)),
);

describe('decide: every category × retries × Retry-After', () => {
  it('uses the configured numbers the table assumes', () => {
    expect(CFG.maxRetries).toBe(2);
    expect(CFG.maxRetryAfterWaitMs).toBe(5000);
    expect(CFG.cooldownMs).toBe(DEFAULTS.resilience.cooldownMs);
  });

  it.each(ROWS)('%s, %i retries used, Retry-After %s', (category, used, ra) => {
    expect(decide(err(category, ra), used, CFG, HALF)).toEqual(expected(category, used, ra));
  });
});

describe('decide: edges', () => {
  it('backoff grows with the retries spent and follows the random source', () => {
    const e = err('server', 'missing');
    expect(decide(e, 0, CFG, () => 0).delayMs).toBe(0);
    expect(decide(e, 0, CFG, () => 0.999).delayMs).toBe(199);
    expect(decide(e, 1, CFG, () => 0.999).delayMs).toBe(399);
  });

  it('a short Retry-After on a 5xx is a floor, not a cap, over the backoff', () => {
    const e = new UpstreamError({ category: 'overloaded', message: 'x', retryAfterMs: 50 });
    expect(decide(e, 1, CFG, () => 0.999)).toEqual(d('retry', 399, 0, 'failure'));
  });

  it('Retry-After exactly at maxRetryAfterWaitMs is still short', () => {
    const e = new UpstreamError({ category: 'rate_limited', message: 'x', retryAfterMs: 5000 });
    expect(decide(e, 0, CFG, HALF)).toEqual(d('retry', 5000, 5000, 'neutral'));
    const s = new UpstreamError({ category: 'server', message: 'x', retryAfterMs: 5000 });
    expect(decide(s, 0, CFG, HALF)).toEqual(d('retry', 5000, 0, 'failure'));
  });

  it('Retry-After: 0 on a 429 retries at once', () => {
    const e = new UpstreamError({ category: 'rate_limited', message: 'x', retryAfterMs: 0 });
    expect(decide(e, 0, CFG, HALF)).toEqual(d('retry', 0, 0, 'neutral'));
  });

  it('a 429 cooldown is never zero, even with Retry-After: 0 and no retries left, or cooldownMs: 0', () => {
    const zeroRa = new UpstreamError({ category: 'rate_limited', message: 'x', retryAfterMs: 0 });
    expect(decide(zeroRa, 2, CFG, HALF).cooldownMs).toBeGreaterThan(0);
    const noCooldown = { ...CFG, cooldownMs: 0 };
    expect(decide(err('rate_limited', 'missing'), 0, noCooldown, HALF)).toEqual(d('failover', 0, 1, 'neutral'));
  });

  it('a 429 whose wait is within throttleMaxWaitMs, with no retry left, fails over as a throttle (waited out if nothing else serves)', () => {
    const short = new UpstreamError({ category: 'rate_limited', message: 'x', retryAfterMs: CFG.throttleMaxWaitMs });
    expect(decide(short, 2, CFG, HALF)).toEqual({ ...d('failover', 0, CFG.throttleMaxWaitMs, 'neutral'), throttle: true });
    // With a retry left it is retried, and held as a throttle meanwhile for the requests that arrive.
    expect(decide(short, 0, CFG, HALF)).toEqual({ ...d('retry', CFG.throttleMaxWaitMs, CFG.throttleMaxWaitMs, 'neutral'), throttle: true });
    const longer = new UpstreamError({ category: 'rate_limited', message: 'x', retryAfterMs: CFG.throttleMaxWaitMs + 1 });
    expect(decide(longer, 2, CFG, HALF).throttle).toBeUndefined();
    expect(decide(err('rate_limited', 'missing'), 2, CFG, HALF).throttle).toBeUndefined();
  });

  it('maxRetries: 0 fails over at once on a 5xx', () => {
    expect(decide(err('server', 'missing'), 0, { ...CFG, maxRetries: 0 }, HALF)).toEqual(d('failover', 0, 0, 'failure'));
  });

  it("a pinned model's 404 is the client's answer: fail, no cooldown, not a breaker failure; nothing else changes when pinned", () => {
    expect(decide(err('not_found', 'missing'), 0, CFG, HALF, true)).toEqual(d('fail', 0, 0, 'neutral'));
    for (const [category, used, ra] of ROWS) {
      if (category !== 'not_found') expect(decide(err(category, ra), used, CFG, HALF, true)).toEqual(expected(category, used, ra));
    }
  });

  it("a refusal of what only this model does not take fails over (no retry, no cooldown, not a breaker failure); any other invalid_request ends the chain", () => {
    const refusals = [
      // OpenAI's reasoning models, as they answer
      new UpstreamError({ category: 'invalid_request', status: 400, message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", providerCode: 'unsupported_parameter', param: 'max_tokens' }),
      new UpstreamError({ category: 'invalid_request', status: 400, message: "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.", providerCode: 'unsupported_value', param: 'temperature' }),
      // said in words only: Ollama, and OpenAI's image refusal
      new UpstreamError({ category: 'invalid_request', status: 400, message: 'registry.ollama.ai/library/gemma:2b does not support tools' }),
      new UpstreamError({ category: 'invalid_request', status: 400, message: 'Invalid content type. image_url is only supported by certain models.' }),
      // Gemini, for what a Gemma model lacks
      new UpstreamError({ category: 'invalid_request', status: 400, message: 'Developer instruction is not enabled for models/gemma-3-27b-it', providerCode: 'INVALID_ARGUMENT' }),
    ];
    for (const e of refusals) {
      expect(decide(e, 0, CFG, HALF)).toEqual(d('failover', 0, 0, 'success'));
      expect(decide(e, 0, CFG, HALF, true)).toEqual(d('failover', 0, 0, 'success'));
    }
    const badRequest = new UpstreamError({ category: 'invalid_request', status: 400, message: "Invalid value for 'role': 'robot'.", providerCode: 'invalid_value', param: 'messages[0].role' });
    expect(decide(badRequest, 0, CFG, HALF)).toEqual(d('fail', 0, 0, 'success'));
    // The code counts only on an invalid_request: a 5xx that names it is still a 5xx.
    const server = new UpstreamError({ category: 'server', status: 500, message: 'x', providerCode: 'unsupported_value' });
    expect(decide(server, 2, CFG, HALF)).toEqual(d('failover', 0, 0, 'failure'));
  });

  it('is pure: the error and config are not touched', () => {
    const e = err('rate_limited', 'short');
    const before = JSON.stringify(CFG);
    decide(e, 0, CFG, HALF);
    expect(e.retryAfterMs).toBe(SHORT);
    expect(JSON.stringify(CFG)).toBe(before);
  });
});
