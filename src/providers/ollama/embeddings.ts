/**
 * OpenAI embeddings ⇄ Ollama `/api/embed`. Ollama embeds texts only. Floats
 * are encoded to base64 here when asked (the openai SDK asks by default), as
 * OpenAI does: little-endian float32 bytes.
 */
import type { Embedding, EmbeddingsRequest, EmbeddingsResponse } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { OllamaEmbedRequest, OllamaEmbedResponse } from './wire.js';
import { checkedVectors, float32Base64 } from '../../protocol/embedding-base64.js';
import { tokenCount } from '../../protocol/token-count.js';
import { embeddingCountError } from '../embedding-count.js';

export function toOllamaEmbed(req: EmbeddingsRequest, model: string): OllamaEmbedRequest {
  const input = req.input;
  if (typeof input !== 'string' && !(Array.isArray(input) && input.every((x) => typeof x === 'string'))) {
    throw new UpstreamError({ category: 'invalid_request', message: 'ollama embeddings take text input only, not token ids', param: 'input', unsent: true });
  }
  const out: OllamaEmbedRequest = { model, input: input as string | string[] };
  if (req.dimensions != null) out.dimensions = req.dimensions;
  return out;
}

/** `inputs`: how many texts were sent (one vector each must come back). */
export function fromOllamaEmbed(value: unknown, model: string, encoding: EmbeddingsRequest['encoding_format'], inputs: number): EmbeddingsResponse {
  const list = (value as OllamaEmbedResponse | null)?.embeddings;
  if (Array.isArray(list) && list.length !== inputs) throw embeddingCountError('ollama', list.length, inputs);
  const vectors = checkedVectors(list, inputs);
  if (vectors === undefined) {
    throw new UpstreamError({ category: 'server', message: `ollama sent an embed response without ${inputs} embeddings` });
  }
  const prompt = tokenCount((value as OllamaEmbedResponse).prompt_eval_count) ?? 0;
  const data: Embedding[] = vectors.map((v, index) => ({
    object: 'embedding',
    index,
    embedding: encoding === 'base64' ? float32Base64(v) : v,
  }));
  return { object: 'list', data, model, usage: { prompt_tokens: prompt, total_tokens: prompt } };
}

