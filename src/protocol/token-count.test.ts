import { describe, expect, it } from 'vitest';
import { checkedUsage, tokenCount } from './token-count.js';

describe('token counts an upstream reported', () => {
  it('a count is a non-negative safe integer; nothing else is one', () => {
    expect([0, 7, 2 ** 53 - 1].map(tokenCount)).toEqual([0, 7, 2 ** 53 - 1]);
    for (const v of ['7', 'a', -5, 1.5, 1e300, Number.POSITIVE_INFINITY, Number.NaN, null, undefined, {}]) expect(tokenCount(v)).toBeUndefined();
  });

  const counted = () => ({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });

  it('keeps a usage whose counts are counts as reported (its details too), its total made good if it is not one', () => {
    const u = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 1 } };
    expect(checkedUsage(u, counted)).toBe(u);
    expect(checkedUsage({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 'x' }, counted)).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
  });

  it('takes each count that is not one from the gateway\'s own count', () => {
    expect(checkedUsage({ prompt_tokens: 'a', completion_tokens: -5 }, counted)).toEqual(counted());
    expect(checkedUsage({ prompt_tokens: 5 }, counted)).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    // The prompt's details go with the reported prompt count they describe, never with the gateway's own count.
    expect(checkedUsage({ prompt_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } }, counted)).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 4 } });
    expect(checkedUsage({ completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } }, counted)).not.toHaveProperty('prompt_tokens_details');
    expect(checkedUsage('lots', counted)).toEqual(counted());
    expect(checkedUsage(undefined, counted)).toEqual(counted());
  });
});
