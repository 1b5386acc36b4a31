import { describe, expect, it } from 'vitest';
import { costUsd } from './cost.js';

describe('costUsd', () => {
  it('prices prompt and completion tokens per million', () => {
    expect(costUsd({ input: 0.15, output: 0.6 }, { promptTokens: 1_000_000, completionTokens: 500_000 })).toBe(0.45);
    expect(costUsd({ input: 3, output: 15 }, { promptTokens: 1200, completionTokens: 300 })).toBe(0.0081);
    expect(costUsd({ input: 0.1, output: 0.2 }, { promptTokens: 1_000_000, completionTokens: 1_000_000 })).toBe(0.3);
  });

  it('is null without a price and 0 without tokens', () => {
    expect(costUsd(undefined, { promptTokens: 100, completionTokens: 100 })).toBeNull();
    expect(costUsd({ input: 1, output: 1 }, { promptTokens: 0, completionTokens: 0 })).toBe(0);
  });

  it('prices the prompt cache hits at cachedInput when the deployment names it, never more of them than the prompt had', () => {
    const price = { input: 3, output: 15, cachedInput: 0.3 };
    // 800 of 1,000 prompt tokens from the cache: 200 × 3 + 800 × 0.3 + 100 × 15
    expect(costUsd(price, { promptTokens: 1000, completionTokens: 100, cachedTokens: 800 })).toBe((200 * 3 + 800 * 0.3 + 100 * 15) / 1e6);
    expect(costUsd(price, { promptTokens: 1000, completionTokens: 100, cachedTokens: 5000 })).toBe((1000 * 0.3 + 100 * 15) / 1e6);
    expect(costUsd(price, { promptTokens: 1000, completionTokens: 100, cachedTokens: -3 })).toBe((1000 * 3 + 100 * 15) / 1e6);
    // No cachedInput: the hits are priced as any prompt token.
    expect(costUsd({ input: 3, output: 15 }, { promptTokens: 1000, completionTokens: 100, cachedTokens: 800 })).toBe((1000 * 3 + 100 * 15) / 1e6);
  });

  it('prices cache writes at cacheWrite, never more of them than the prompt had beside its hits', () => {
    const price = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 };
    // 1,000 prompt tokens: 300 hits, 600 written, 100 plain.
    expect(costUsd(price, { promptTokens: 1000, completionTokens: 0, cachedTokens: 300, cacheWriteTokens: 600 })).toBeCloseTo((100 * 3 + 300 * 0.3 + 600 * 3.75) / 1e6, 12);
    expect(costUsd(price, { promptTokens: 1000, completionTokens: 0, cachedTokens: 300, cacheWriteTokens: 5000 })).toBeCloseTo((300 * 0.3 + 700 * 3.75) / 1e6, 12);
    // No cacheWrite: the writes are priced as any prompt token.
    expect(costUsd({ input: 3, output: 15 }, { promptTokens: 1000, completionTokens: 0, cacheWriteTokens: 600 })).toBe((1000 * 3) / 1e6);
  });

  it('ignores nonsense token counts', () => {
    expect(costUsd({ input: 1, output: 1 }, { promptTokens: -5, completionTokens: Number.NaN })).toBe(0);
  });
});
