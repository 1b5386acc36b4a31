/**
 * Providers cap the texts one embeddings call may carry (Gemini's
 * batchEmbedContents 100, Cohere's embed 96) where OpenAI takes 2,048: a
 * larger request is sent as several calls, at once, and answered as one —
 * vectors in input order, usage summed. A failed call fails the attempt
 * (the executor retries or fails over the whole request).
 */
import type { EmbeddingsResponse } from '../protocol/openai.js';
import type { EmbeddingsResult } from './types.js';

export async function embedInBatches(
  texts: string[],
  limit: number,
  call: (batch: string[]) => Promise<EmbeddingsResult>,
): Promise<EmbeddingsResult> {
  if (texts.length <= limit) return call(texts);
  const batches: string[][] = [];
  for (let i = 0; i < texts.length; i += limit) batches.push(texts.slice(i, i + limit));
  const answers = await Promise.all(batches.map(call));
  const first = answers[0]!.response;
  let tokens = 0;
  const data: EmbeddingsResponse['data'] = [];
  for (const { response } of answers) {
    tokens += response.usage.prompt_tokens;
    for (const e of response.data) data.push({ ...e, index: data.length });
  }
  // The last answer's headers: the freshest word on the provider's remaining limits.
  return { response: { object: 'list', data, model: first.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }, headers: answers[answers.length - 1]!.headers };
}
