import type { EmbeddingsRequest } from './openai.js';

/**
 * How many vectors an embeddings request asks for, with `input` as validate.ts admits it:
 * one per string or token-id array of a list, one for a lone string or a lone token-id
 * array (a list of numbers).
 */
export function embeddingInputCount(input: EmbeddingsRequest['input']): number {
  return Array.isArray(input) && typeof input[0] !== 'number' ? input.length : 1;
}
