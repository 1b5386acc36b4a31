/**
 * The OpenAI stream chunks native adapters (Anthropic, Gemini, Cohere, Ollama)
 * build, with the fields OpenAI always sends: `system_fingerprint` on every
 * chunk and `logprobs` on every choice (null: no native provider has either),
 * and `refusal: null` beside the role in an answer's first delta. One shape
 * for all four, so a strict client's decoder sees the same fields whoever
 * served.
 */
import type { ChatCompletionChunk, ChunkChoice, ChunkDelta, FinishReason, Usage } from '../protocol/openai.js';

export function nativeChunk(id: string, created: number, model: string, choices: ChunkChoice[], usage?: Usage): ChatCompletionChunk {
  const c: ChatCompletionChunk = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: null, choices };
  if (usage) c.usage = usage;
  return c;
}

export function nativeChoice(index: number, delta: ChunkDelta, finish: FinishReason | null = null): ChunkChoice {
  return { index, delta, logprobs: null, finish_reason: finish };
}

/** The delta that opens a choice's answer. A fresh object each time: a later stage may edit a delta. */
export const roleDelta = (): ChunkDelta => ({ role: 'assistant', content: '', refusal: null });
