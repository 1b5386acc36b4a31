/**
 * Anthropic Message → OpenAI ChatCompletion. Pure, except for the hand-checked
 * parse of the upstream body (anything not message-shaped is a server fault).
 */
import type { ChatCompletion, ToolCall, Usage } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { mapStopReason } from './map-stop-reason.js';
import type { AnthropicMessage, AnthropicUsage } from './wire.js';
import { toolArgumentsJson } from '../tool-arguments.js';

const decoder = new TextDecoder();

/** `model`: the deployment's, named in the answer when the upstream's names none (every response names the model that served). */
export function parseMessage(raw: Uint8Array, model: string): AnthropicMessage {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(raw));
  } catch {
    throw new UpstreamError({ category: 'server', message: 'anthropic sent a malformed JSON body' });
  }
  const v = value as Partial<AnthropicMessage> | null;
  if (v === null || typeof v !== 'object' || !Array.isArray(v.content) || typeof v.id !== 'string') {
    throw new UpstreamError({ category: 'server', message: 'anthropic response is not a message' });
  }
  if (typeof v.model !== 'string' || v.model === '') v.model = model;
  return v as AnthropicMessage;
}

/**
 * Anthropic counts cached prompt tokens apart from `input_tokens`; OpenAI's
 * prompt_tokens includes them, with the cache hits repeated in the details.
 * A count the upstream did not send as a number stays undefined, so the
 * gateway counts it (checkedUsage, StreamTally) as it does for any upstream:
 * read as 0, an Anthropic-compatible server that reports no usage gave
 * answers that cost nothing and took nothing from the token limits.
 */
export function toUsage(u: AnthropicUsage | undefined): Usage {
  const cacheRead = num(u?.cache_read_input_tokens);
  const cacheWrite = num(u?.cache_creation_input_tokens);
  const input = u?.input_tokens;
  const output = u?.output_tokens;
  const prompt = typeof input === 'number' ? input + cacheWrite + cacheRead : undefined;
  const completion = typeof output === 'number' ? output : undefined;
  const usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt !== undefined && completion !== undefined ? prompt + completion : undefined,
    prompt_tokens_details: { cached_tokens: cacheRead },
  } as Usage;
  // Cache writes are billed above the input price: named under Anthropic's own name, as
  // LiteLLM and Portkey pass it on, and priced at the deployment's `cacheWrite` (cost.ts).
  if (cacheWrite > 0) usage.cache_creation_input_tokens = cacheWrite;
  return usage;
}

function num(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) ? n : 0;
}

/**
 * A tool_use block's `id` or `name` when it is a string, else '' (as when absent). Not
 * String(): that joins an array's items recursively, so an id nested some thousands of
 * arrays deep overflowed the stack, a 500 from the gateway's own code.
 */
export const stringOr = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * @param prefillTrim whitespace trimmed off the request's final assistant
 *   prefill: the client already has it, so it is removed again from the start
 *   of the continuation when the model repeats it.
 */
export function toChatCompletion(msg: AnthropicMessage, created: number, prefillTrim = ''): ChatCompletion {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const block of msg.content) {
    // A block that is not an object is skipped, as the stream skips a malformed event.
    if (block === null || typeof block !== 'object') continue;
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning += block.thinking;
    else if (block.type === 'tool_use') {
      toolCalls.push({
        id: stringOr(block.id),
        type: 'function',
        function: { name: stringOr(block.name), arguments: toolArgumentsJson(block.input ?? {}) },
      });
    }
    // redacted_thinking holds only encrypted reasoning (no text to show); server-tool blocks have no OpenAI form.
    // Signatures are dropped: an OpenAI client cannot send thinking blocks back (thinking.ts).
  }
  if (prefillTrim) text = text.slice(overlap(text, prefillTrim));
  const completion: ChatCompletion = {
    id: msg.id,
    object: 'chat.completion',
    created,
    model: msg.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text.length > 0 || toolCalls.length === 0 ? text : null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          refusal: null,
          ...(reasoning.length > 0 ? { reasoning_content: reasoning } : {}),
        },
        logprobs: null,
        finish_reason: mapStopReason(msg.stop_reason),
      },
    ],
    usage: toUsage(msg.usage),
    // OpenAI sends it with every answer; Anthropic has no fingerprint to give.
    system_fingerprint: null,
  };
  return completion;
}

/** How many leading chars of `text` repeat `trim` from its start. */
export function overlap(text: string, trim: string): number {
  let i = 0;
  while (i < text.length && i < trim.length && text.charCodeAt(i) === trim.charCodeAt(i)) i++;
  return i;
}
