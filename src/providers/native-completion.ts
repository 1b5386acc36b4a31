/**
 * The buffered OpenAI answer Cohere and Ollama build (native-chunk.ts is its
 * stream form): one choice, `logprobs: null` beside it and `system_fingerprint:
 * null` on it, as OpenAI always sends them (neither provider has either), and
 * `refusal: null` in the message. Anthropic's and Gemini's answers write their
 * fields in another order (and Gemini several choices), so they keep their own.
 */
import type { AssistantMessage, ChatCompletion, FinishReason, ToolCall, Usage } from '../protocol/openai.js';

/** Content is null beside tool calls when there is no text; reasoning ('' for none) goes beside the answer. */
export function nativeMessage(text: string, toolCalls: ToolCall[] | undefined, reasoning: string): AssistantMessage {
  const message: AssistantMessage = toolCalls
    ? { role: 'assistant', content: text.length > 0 ? text : null, tool_calls: toolCalls, refusal: null }
    : { role: 'assistant', content: text, refusal: null };
  if (reasoning.length > 0) message.reasoning_content = reasoning;
  return message;
}

export function nativeCompletion(
  id: string,
  created: number,
  model: string,
  message: AssistantMessage,
  finish: FinishReason,
  usage: Usage | undefined,
): ChatCompletion {
  const completion: ChatCompletion = {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    system_fingerprint: null,
  };
  if (usage) completion.usage = usage;
  return completion;
}
