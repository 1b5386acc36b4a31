/**
 * OpenAI embeddings ⇄ Cohere `/v2/embed`. Cohere embeds texts only; token-id
 * inputs cannot be sent. Always asks for floats and encodes base64 itself, so
 * `encoding_format: "base64"` (the openai SDK's default) means exactly what
 * OpenAI means by it: little-endian float32 bytes.
 */
import type { Embedding, EmbeddingsRequest, EmbeddingsResponse } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { CohereEmbedRequest, CohereEmbedResponse } from './wire.js';
import { checkedVectors, float32Base64 } from '../../protocol/embedding-base64.js';
import { tokenCount } from '../../protocol/token-count.js';
import { inputTypeOf } from '../embedding-input-type.js';
import { embeddingCountError } from '../embedding-count.js';

const FLOAT: ['float'] = ['float'];

export function toCohereEmbed(req: EmbeddingsRequest, model: string): CohereEmbedRequest {
  const input = req.input;
  let texts: string[];
  if (typeof input === 'string') texts = [input];
  else if (Array.isArray(input) && input.every((x) => typeof x === 'string')) texts = input as string[];
  else throw new UpstreamError({ category: 'invalid_request', message: 'cohere embeddings take text input only, not token ids', param: 'input', unsent: true });
  // Required by Cohere's v3+ models; a document when the client says nothing (LiteLLM's default too).
  const out: CohereEmbedRequest = { model, texts, input_type: inputTypeOf(req, 'cohere') ?? 'search_document', embedding_types: FLOAT };
  if (req.dimensions != null) out.output_dimension = req.dimensions;
  return out;
}

/** `inputs`: how many texts were sent (one vector each must come back). */
export function fromCohereEmbed(value: unknown, model: string, encoding: EmbeddingsRequest['encoding_format'], inputs: number): EmbeddingsResponse {
  const float = (value as CohereEmbedResponse | null)?.embeddings?.float;
  if (Array.isArray(float) && float.length !== inputs) throw embeddingCountError('cohere', float.length, inputs);
  const vectors = checkedVectors(float, inputs);
  if (vectors === undefined) {
    throw new UpstreamError({ category: 'server', message: `cohere sent an embed response without ${inputs} float embeddings` });
  }
  const meta = (value as CohereEmbedResponse).meta;
  const prompt = tokenCount(meta?.billed_units?.input_tokens) ?? tokenCount(meta?.tokens?.input_tokens) ?? 0;
  const data: Embedding[] = vectors.map((v, index) => ({
    object: 'embedding',
    index,
    embedding: encoding === 'base64' ? float32Base64(v) : v,
  }));
  return { object: 'list', data, model, usage: { prompt_tokens: prompt, total_tokens: prompt } };
}

