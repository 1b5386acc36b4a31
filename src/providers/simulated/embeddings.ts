/**
 * Simulated embeddings: a deterministic unit vector per input, seeded by a hash
 * of the input, so equal inputs embed equally on every run and deployment.
 * Honours `dimensions` and `encoding_format: base64` (the openai SDK's default).
 */
import type { Embedding, EmbeddingsRequest, EmbeddingsResponse } from '../../protocol/openai.js';
import { seededRandom } from '../../core/clock.js';
import { fnv1a } from './hash.js';
import { float32Base64 } from '../../protocol/embedding-base64.js';

const DEFAULT_DIMENSIONS = 8;

export function simulateEmbeddings(req: EmbeddingsRequest, model: string): EmbeddingsResponse {
  const inputs = embeddingInputs(req.input);
  const dims = typeof req.dimensions === 'number' && req.dimensions > 0 ? Math.floor(req.dimensions) : DEFAULT_DIMENSIONS;
  const base64 = req.encoding_format === 'base64';
  let tokens = 0;
  const data: Embedding[] = inputs.map((input, index) => {
    tokens += input.tokens;
    const vector = unitVector(input.key, dims);
    return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
  });
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

export function unitVector(key: string, dims: number): number[] {
  const random = seededRandom(fnv1a(key));
  const v = new Array<number>(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    const x = random() * 2 - 1;
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dims; i++) v[i] = v[i]! / norm;
  return v;
}

interface Input {
  key: string;
  tokens: number;
}

/** Text, texts, one token array, or many token arrays (OpenAI's four input forms). */
function embeddingInputs(input: EmbeddingsRequest['input']): Input[] {
  if (typeof input === 'string') return [textInput(input)];
  if (!Array.isArray(input) || input.length === 0) return [];
  if (typeof input[0] === 'number') return [tokenInput(input as number[])];
  return (input as (string | number[])[]).map((x) => (typeof x === 'string' ? textInput(x) : tokenInput(x)));
}

function textInput(text: string): Input {
  return { key: text, tokens: Math.max(1, Math.ceil(text.length / 4)) };
}

function tokenInput(tokens: number[]): Input {
  return { key: tokens.join(','), tokens: tokens.length };
}

