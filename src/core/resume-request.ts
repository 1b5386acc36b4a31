/**
 * The request that continues a broken stream (stream resume): the client's
 * conversation with the answer delivered so far as a final assistant message
 * (a prefill), asking only for what is left of the client's token budget.
 */
import type { ChatRequest } from '../protocol/openai.js';

/**
 * `delivered`: the answer's text the client has; `spentTokens`: the completion tokens
 * the attempts so far produced (reported, or counted).
 */
export function resumeRequest(req: ChatRequest, delivered: string, spentTokens: number): ChatRequest {
  const out: ChatRequest = { ...req, messages: [...req.messages, { role: 'assistant', content: delivered }] };
  // The client's limit is on the whole answer: a continuation given the full budget again could
  // add that many tokens to those already delivered. At least one, so the request stays valid;
  // an answer already at its limit then ends at once with finish_reason `length`.
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const limit = req[field];
    if (typeof limit === 'number') out[field] = Math.max(1, limit - spentTokens);
  }
  return out;
}
