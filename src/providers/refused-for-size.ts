/**
 * A rate limit's 429 that is really a refusal of the request's size. Anthropic answers with the
 * same words whether its minute is full or the request alone is larger than all of it ("This
 * request would exceed the rate limit for your organization (…) of 30,000 input tokens per
 * minute"), Gemini names its input-token quota the same way for either ("Quota exceeded for
 * metric: …input_token_count, limit: 250000"). The second is no rate limit: no wait lets that
 * request through on this deployment. Read as one, it cooled the deployment down for every other
 * client's requests, and when no other candidate served the client got a 503 inviting a retry
 * that would fail the same way. OpenAI says it outright ("Request too large … (TPM)", classify.ts);
 * here it is told by size.
 *
 * So a rate limit whose error names the deployment's input-token limit (`inputTokenLimit`, read by
 * the provider's error mapping) becomes this deployment's refusal of the request when the prompt is
 * plainly larger: its text at 4 characters a token (English runs ~3.5 a token with Claude's and
 * Gemini's tokenizers, other scripts far fewer; only whitespace-heavy text runs longer) above MARGIN
 * times the limit. It is worded as OpenAI's, so refusedByThisModel knows it: the next candidate, no
 * cooldown, no breaker, the reserved tokens back, and a 400 when no candidate takes it. A request
 * nearer the limit stays a rate limit, as before. The caller leaves out requests whose input may not
 * all count (a prompt-cache breakpoint: Anthropic does not count cached input towards its limit).
 */
import { UpstreamError } from '../resilience/upstream-error.js';

/** How far over the limit the prompt must weigh before the refusal is read as "too large". */
export const MARGIN = 1.5;
const CHARS_PER_TOKEN = 4;

/** `err` as this deployment's refusal of a prompt of `promptChars()` characters, when it is that; else `err` unchanged. */
export function refusedForSize(err: unknown, model: string, promptChars: () => number): unknown {
  if (!(err instanceof UpstreamError) || err.category !== 'rate_limited' || err.inputTokenLimit === undefined) return err;
  const limit = err.inputTokenLimit;
  const tokens = Math.ceil(promptChars() / CHARS_PER_TOKEN);
  if (tokens <= limit * MARGIN) return err;
  return new UpstreamError({
    category: 'invalid_request',
    status: err.status,
    message:
      `Request too large for ${model} on input tokens per minute: the prompt alone is about ${tokens.toLocaleString('en-US')} tokens, ` +
      `and this deployment's whole limit is ${limit.toLocaleString('en-US')}. Reduce the prompt, or use a deployment with a larger limit`,
    providerCode: err.providerCode,
    headers: err.headers,
    param: 'messages',
  });
}
