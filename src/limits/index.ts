/** Outbound pacing and client-key limits: the API the executor and server use. */
export { Pacer, isThrottled, type Acquired, type Throttled } from './pacer.js';
export { WaitGate, DEFAULT_MAX_WAITERS, type GateResult, type WaitGateOptions } from './wait-gate.js';
export { KeyLimiter, type KeyCheck } from './key-limiter.js';
export { NOOP_LEASE, type Lease } from './lease.js';
export {
  estimatePromptTokens,
  estimateRequestTokens,
  estimateEmbeddingsTokens,
  loadTokenizers,
  loadTokenizersFor,
  encodingFor,
} from './estimate-tokens.js';
export { parseRateLimitHeaders, parseRetryAfterMs, parseDurationMs, type RateLimitInfo } from './rate-limit-headers.js';
