/**
 * An upstream error under another category, all else it carries kept: where a
 * provider's status or code means what the generic classifier cannot know
 * (Cohere's 498, Ollama's 503, Anthropic's billing error).
 */
import { UpstreamError, type ErrorCategory, type UpstreamErrorInit } from '../resilience/upstream-error.js';

export function recategorized(err: UpstreamError, category: ErrorCategory): UpstreamError {
  return amended(err, { category });
}

/** `err` with `changes` made, all else it carries kept (a limit the provider's body names, say); not its `cause`. */
export function amended(err: UpstreamError, changes: Partial<UpstreamErrorInit>): UpstreamError {
  return new UpstreamError({
    category: err.category,
    message: err.message,
    status: err.status,
    providerCode: err.providerCode,
    retryAfterMs: err.retryAfterMs,
    headers: err.headers,
    param: err.param,
    inputTokenLimit: err.inputTokenLimit,
    unsent: err.unsent,
    meantStatus: err.meantStatus,
    ...changes,
  });
}
