/**
 * What a request cost, from the deployment's configured price (USD per 1M
 * tokens). Null when no price is configured: unknown is not free.
 */
import type { Price } from '../config/types.js';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens, those the upstream served from its prompt cache. */
  cachedTokens?: number;
  /** Of the prompt tokens, those the upstream wrote to its prompt cache. */
  cacheWriteTokens?: number;
}

export function costUsd(price: Price | undefined, usage: TokenUsage): number | null {
  if (price === undefined) return null;
  const prompt = tokens(usage.promptTokens);
  // Cache hits and writes at their own prices when the deployment names them; never more of them than the prompt had.
  const cached = price.cachedInput === undefined || usage.cachedTokens === undefined ? 0 : Math.min(tokens(usage.cachedTokens), prompt);
  const written = price.cacheWrite === undefined || usage.cacheWriteTokens === undefined ? 0 : Math.min(tokens(usage.cacheWriteTokens), prompt - cached);
  const input =
    (prompt - cached - written) * price.input + (cached === 0 ? 0 : cached * price.cachedInput!) + (written === 0 ? 0 : written * price.cacheWrite!);
  const cost = (input + tokens(usage.completionTokens) * price.output) / 1_000_000;
  // Round away binary noise (0.30000000000000004) at a precision far below a token's price.
  return Math.round(cost * 1e12) / 1e12;
}

function tokens(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}
