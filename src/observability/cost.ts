/**
 * What a request cost, from the deployment's configured price (USD per 1M
 * tokens). Null when no price is configured: unknown is not free.
 */
import type { Price } from '../config/types.js';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export function costUsd(price: Price | undefined, usage: TokenUsage): number | null {
  if (price === undefined) return null;
  const cost = (tokens(usage.promptTokens) * price.input + tokens(usage.completionTokens) * price.output) / 1_000_000;
  // Round away binary noise (0.30000000000000004) at a precision far below a token's price.
  return Math.round(cost * 1e12) / 1e12;
}

function tokens(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}
