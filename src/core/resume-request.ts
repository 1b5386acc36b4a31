/**
 * The request that continues a broken stream (stream resume): the client's
 * conversation with the answer delivered so far as a final assistant message
 * (a prefill), asking only for what is left of the client's token budget.
 */
import type { ChatMessage, ChatRequest } from '../protocol/openai.js';

/**
 * `delivered`: the answer's text the client has; `spentTokens`: the completion tokens
 * the attempts so far produced (reported, or counted).
 */
export function resumeRequest(req: ChatRequest, delivered: string, spentTokens: number): ChatRequest {
  const out: ChatRequest = { ...req, messages: withPrefill(req.messages, delivered) };
  // The client's limit is on the whole answer: a continuation given the full budget again could
  // add that many tokens to those already delivered. At least one, so the request stays valid;
  // an answer already at its limit then ends at once with finish_reason `length`.
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    const limit = req[field];
    if (typeof limit === 'number') out[field] = Math.max(1, limit - spentTokens);
  }
  return out;
}

/**
 * A conversation that already ends with an assistant message is the client's own prefill,
 * which the answer continues: the delivered text extends it. Appended as a second assistant
 * message, it read as a finished turn and the delivered text as another, which a model
 * continues as a new answer (and OpenAI-compatible servers' prefix flags, kept on the
 * client's message, apply to its last message only).
 */
function withPrefill(messages: ChatMessage[], delivered: string): ChatMessage[] {
  const last = messages[messages.length - 1];
  // A turn that called a tool (or a legacy function) is no prefill: the text would join the call.
  const own = last !== undefined && last.role === 'assistant' && !(last.tool_calls?.length) && last.function_call == null ? textOf(last.content) : undefined;
  if (own === undefined) return [...messages, { role: 'assistant', content: delivered }];
  return [...messages.slice(0, -1), { ...last!, content: own + delivered }];
}

/** A message's content as one text, or undefined if it holds anything but text. */
function textOf(content: ChatMessage['content']): string | undefined {
  if (typeof content === 'string') return content;
  if (content == null) return '';
  let text = '';
  for (const part of content) {
    if (part.type !== 'text' || typeof part.text !== 'string') return undefined;
    text += part.text;
  }
  return text;
}
