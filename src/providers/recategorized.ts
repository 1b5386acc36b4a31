/**
 * An upstream error under another category, all else it carries kept: where a
 * provider's status or code means what the generic classifier cannot know
 * (Cohere's 498, Ollama's 503, Anthropic's billing error).
 */
import { UpstreamError, type ErrorCategory } from '../resilience/upstream-error.js';

export function recategorized(err: UpstreamError, category: ErrorCategory): UpstreamError {
  return new UpstreamError({
    category,
    message: err.message,
    status: err.status,
    providerCode: err.providerCode,
    retryAfterMs: err.retryAfterMs,
    headers: err.headers,
    param: err.param,
    inputTokenLimit: err.inputTokenLimit,
  });
}
