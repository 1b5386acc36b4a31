/**
 * Cohere v2 chat response → OpenAI chat completion, plus the finish-reason and
 * usage mappings the stream shares. Pure.
 */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../protocol/openai.js';
import { categorizeWithoutStatus } from '../../resilience/classify.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { CohereChatResponse, CohereUsage } from './wire.js';
import { nativeCompletion, nativeMessage } from '../native-completion.js';

export function mapCohereFinishReason(reason: unknown): FinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
    case 'ERROR_LIMIT': // v1 name for hitting the context limit
    case 'TIMEOUT': // cut short by time: the answer is truncated, like a length stop
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    case 'ERROR_TOXIC':
      return 'content_filter';
    default: // COMPLETE, STOP_SEQUENCE, and kinds added later (ERROR: see cohereGenerationError)
      return 'stop';
  }
}

/**
 * `finish_reason: "ERROR"`: the generation failed upstream (a stream's `message-end` says why in
 * `delta.error`). What came before it is not an answer: the attempt fails, as the error's words
 * say (`server` when they name nothing), rather than ending as a clean `stop`. Undefined otherwise.
 */
export function cohereGenerationError(reason: unknown, error: unknown): UpstreamError | undefined {
  if (reason !== 'ERROR') return undefined;
  const message = typeof error === 'string' && error ? error : 'cohere generation failed (finish_reason ERROR)';
  return new UpstreamError({ category: categorizeWithoutStatus(message), message });
}

/** Billed units are what Cohere invoices; raw token counts (prompt template included) are the fallback. */
export function cohereUsage(u: CohereUsage | undefined): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const billed = u.billed_units;
  const tokens = u.tokens;
  const prompt = num(billed?.input_tokens) ?? num(tokens?.input_tokens);
  const completion = num(billed?.output_tokens) ?? num(tokens?.output_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  const usage: Usage = {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    total_tokens: (prompt ?? 0) + (completion ?? 0),
  };
  const cached = num(u.cached_tokens);
  if (cached !== undefined) usage.prompt_tokens_details = { cached_tokens: cached };
  return usage;
}

/** Validates the shape the adapter relies on; anything else is the upstream's fault. */
/** `newToolId`: for a tool call that came without an id (Cohere sends one; a client needs one to answer it). */
export function fromCohereResponse(value: unknown, model: string, created: number, newToolId: () => string): ChatCompletion {
  if (!isCohereChatResponse(value)) {
    throw new UpstreamError({ category: 'server', message: 'cohere sent a chat response without a message' });
  }
  const failed = cohereGenerationError(value.finish_reason, undefined);
  if (failed) throw failed;
  const msg = value.message;
  let text = '';
  let reasoning = '';
  // Parts and calls that are not objects are skipped, as the stream skips a malformed event.
  if (Array.isArray(msg.content)) {
    for (const part of msg.content) {
      if (!isObject(part)) continue;
      if (part.type === 'text' && typeof part.text === 'string') text += part.text;
      else if (part.type === 'thinking' && typeof part.thinking === 'string') reasoning += part.thinking;
    }
  }
  let toolCalls: ToolCall[] | undefined;
  const calls = Array.isArray(msg.tool_calls) ? msg.tool_calls.filter(isObject) : [];
  if (calls.length > 0) {
    toolCalls = calls.map((c) => ({
      id: typeof c.id === 'string' && c.id ? c.id : newToolId(),
      type: 'function',
      function: { name: stringOr(c.function?.name), arguments: stringOr(c.function?.arguments) },
    }));
  }
  // A reasoning model's thinking content: reasoning beside the answer.
  const message = nativeMessage(text, toolCalls, reasoning);
  return nativeCompletion(value.id, created, model, message, mapCohereFinishReason(value.finish_reason), cohereUsage(value.usage));
}

function isCohereChatResponse(v: unknown): v is CohereChatResponse {
  if (!v || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return typeof o.id === 'string' && !!o.message && typeof o.message === 'object';
}

const isObject = <T>(v: T | null | undefined): v is T => v !== null && typeof v === 'object';
/** `v` when it is a string, else '': a tool call's name and arguments reach the client as strings, buffered or streamed. */
export const stringOr = (v: unknown): string => (typeof v === 'string' ? v : '');

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
