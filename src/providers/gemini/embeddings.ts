/**
 * OpenAI embeddings ↔ Gemini `batchEmbedContents`. One batch call serves both
 * a single string and a list, so there is one code path. Gemini reports no
 * token usage for embeddings, so usage is estimated (≈4 characters a token, non-ASCII
 * text weighed as a prompt's is: text-weight.ts) when the body carries none: the
 * gateway needs a number for limits and cost.
 */
import type { Embedding, EmbeddingsRequest, EmbeddingsResponse } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { textTokens } from '../../protocol/text-weight.js';
import { invalidRequest } from './errors.js';
import type { BatchEmbedContentsRequest, BatchEmbedContentsResponse, GeminiTaskType } from './wire.js';
import type { InputType } from '../embedding-input-type.js';
import { checkedVectors, float32Base64 } from '../../protocol/embedding-base64.js';
import { tokenCount } from '../../protocol/token-count.js';
import { embeddingCountError } from '../embedding-count.js';

/** The texts of an embeddings request; token arrays have no Gemini equivalent. */
export function embeddingTexts(req: EmbeddingsRequest): string[] {
  const input = req.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'string')) return input as string[];
  if (Array.isArray(input) && input.length === 0) throw invalidRequest('input must not be empty', 'input');
  throw invalidRequest('Gemini embeddings take text input only, not token arrays', 'input');
}

/** The client's `input_type` (embedding-input-type.ts) as Gemini's `taskType`. */
const TASK_TYPE: Readonly<Record<InputType, GeminiTaskType>> = {
  search_document: 'RETRIEVAL_DOCUMENT',
  search_query: 'RETRIEVAL_QUERY',
  classification: 'CLASSIFICATION',
  clustering: 'CLUSTERING',
};

/** `model` is the bare model name; Gemini wants `models/NAME` inside each request. No `inputType`: Gemini's default task. */
export function toBatchEmbedRequest(texts: string[], model: string, dimensions?: number, inputType?: InputType): BatchEmbedContentsRequest {
  const name = model.includes('/') ? model : `models/${model}`;
  const taskType = inputType === undefined ? undefined : TASK_TYPE[inputType];
  return {
    requests: texts.map((text) => {
      const r: BatchEmbedContentsRequest['requests'][number] = { model: name, content: { parts: [{ text }] } };
      if (typeof dimensions === 'number') r.outputDimensionality = dimensions;
      if (taskType !== undefined) r.taskType = taskType;
      return r;
    }),
  };
}

export function estimateTokens(texts: string[]): number {
  let tokens = 0;
  for (const t of texts) tokens += textTokens(t);
  return Math.ceil(tokens);
}

export function fromBatchEmbedResponse(
  body: BatchEmbedContentsResponse,
  texts: string[],
  model: string,
  encoding: EmbeddingsRequest['encoding_format'],
): EmbeddingsResponse {
  const list: unknown[] = Array.isArray(body.embeddings) ? body.embeddings : [];
  if (list.length !== texts.length) throw embeddingCountError('gemini', list.length, texts.length);
  // Checked as Cohere's and Ollama's are: an entry without a vector of finite numbers is a
  // malformed answer (failed over), never an empty or null-filled vector sent with a 200.
  const vectors = checkedVectors(
    list.map((e) => (e as { values?: unknown } | null)?.values),
    texts.length,
  );
  if (vectors === undefined) {
    throw new UpstreamError({ category: 'server', message: `gemini sent a batchEmbedContents response without ${texts.length} embeddings of numbers` });
  }
  const data: Embedding[] = vectors.map((values, index) => ({ object: 'embedding', index, embedding: encoding === 'base64' ? float32Base64(values) : values }));
  const reported = body.usageMetadata?.promptTokenCount;
  const prompt = tokenCount(reported) ?? estimateTokens(texts);
  return { object: 'list', data, model, usage: { prompt_tokens: prompt, total_tokens: prompt } };
}
