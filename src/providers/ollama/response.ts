/**
 * Ollama `/api/chat` answer → OpenAI chat completion, plus the mappings the
 * stream shares. Ollama reports `done_reason: "stop"` even when the model
 * called tools, so tool calls decide the finish reason. Pure.
 */
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { OllamaChatResponse } from './wire.js';
import { toolArgumentsJson } from '../tool-arguments.js';
import { nativeCompletion, nativeMessage } from '../native-completion.js';

export function mapOllamaDoneReason(reason: unknown): FinishReason {
  return reason === 'length' ? 'length' : 'stop';
}

export function ollamaUsage(r: OllamaChatResponse): Usage | undefined {
  const prompt = num(r.prompt_eval_count);
  const completion = num(r.eval_count);
  if (prompt === undefined && completion === undefined) return undefined;
  // Ollama omits prompt_eval_count when the whole prompt came from its cache.
  const p = prompt ?? 0;
  const c = completion ?? 0;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/** Ollama's object arguments → OpenAI's JSON text; ids minted where the server sent none. */
export function ollamaToolCalls(
  calls: NonNullable<OllamaChatResponse['message']>['tool_calls'],
  newId: () => string,
): ToolCall[] | undefined {
  if (!Array.isArray(calls)) return undefined;
  const out: ToolCall[] = [];
  for (const c of calls as unknown[]) {
    // A call without a named function (null, a number, `function: null`) is no call: skipped,
    // as a malformed event is, rather than made into one the model never asked for.
    const fn = c !== null && typeof c === 'object' ? (c as { function?: unknown }).function : undefined;
    const name = fn !== null && typeof fn === 'object' ? (fn as { name?: unknown }).name : undefined;
    if (typeof name !== 'string' || name === '') continue;
    const id = (c as { id?: unknown }).id;
    const args = (fn as { arguments?: unknown }).arguments;
    out.push({
      id: typeof id === 'string' && id ? id : newId(),
      type: 'function',
      function: { name, arguments: typeof args === 'string' ? args : toolArgumentsJson(args ?? {}) },
    });
  }
  return out.length > 0 ? out : undefined;
}

export function fromOllamaResponse(value: unknown, model: string, created: number, id: string, newToolId: () => string): ChatCompletion {
  // A message that is not an object (`"message": "Hi"`) carries no answer either: read as one, the client got an empty 200.
  const message = value !== null && typeof value === 'object' ? (value as OllamaChatResponse).message : undefined;
  if (message === null || typeof message !== 'object') {
    throw new UpstreamError({ category: 'server', message: 'ollama sent a chat response without a message' });
  }
  const r = value as OllamaChatResponse;
  const msg = message;
  const text = typeof msg.content === 'string' ? msg.content : '';
  const toolCalls = ollamaToolCalls(msg.tool_calls, newToolId);
  // A thinking model's reasoning (asked for with `think`): reasoning beside the answer.
  const answer = nativeMessage(text, toolCalls, typeof msg.thinking === 'string' ? msg.thinking : '');
  return nativeCompletion(id, created, model, answer, toolCalls ? 'tool_calls' : mapOllamaDoneReason(r.done_reason), ollamaUsage(r));
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}
