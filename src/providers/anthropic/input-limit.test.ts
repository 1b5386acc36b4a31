import { describe, expect, it } from 'vitest';
import { refusedByThisModel } from '../../resilience/classify.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { withoutRetryAfter } from '../../protocol/retry-after.js';
import { inputLimitOf, MARGIN, refusedForSize } from './input-limit.js';
import type { AnthropicRequest } from './wire.js';

const MESSAGE = 'This request would exceed the rate limit for your organization (0dccdde6) of 30,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.';
const rateLimited = (headers: Record<string, string> = {}, message = MESSAGE, status = 429) =>
  new UpstreamError({ category: 'rate_limited', status, message, providerCode: 'rate_limit_error', headers: { 'retry-after': '30', ...headers } });
/** A body whose user turn holds `chars` characters. */
const bodyOf = (chars: number, extra: Partial<AnthropicRequest> = {}): AnthropicRequest => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'a'.repeat(chars) }],
  ...extra,
});
const overMargin = Math.ceil(30_000 * MARGIN * 4) + 4;

describe('inputLimitOf', () => {
  it("reads Anthropic's limit header first, else the number its message names (with its thousands commas)", () => {
    expect(inputLimitOf(rateLimited({ 'anthropic-ratelimit-input-tokens-limit': '40000' }))).toBe(40_000);
    expect(inputLimitOf(rateLimited())).toBe(30_000);
    expect(inputLimitOf(rateLimited({}, 'Number of request tokens has exceeded your per-minute rate limit'))).toBeUndefined();
    expect(inputLimitOf(rateLimited({ 'anthropic-ratelimit-input-tokens-limit': 'lots' }, 'no number here'))).toBeUndefined();
  });
});

describe('refusedForSize', () => {
  it('a prompt plainly over the limit: a refusal by this deployment that refusedByThisModel knows, without the upstream words', () => {
    const err = refusedForSize(rateLimited(), bodyOf(overMargin)) as UpstreamError;
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ category: 'invalid_request', status: 429, providerCode: 'rate_limit_error', param: 'messages' });
    expect(err.message).toMatch(/^Request too large for claude-sonnet-4-5 on input tokens per minute: the prompt alone is about 45,00\d tokens, and this deployment's whole limit is 30,000 a minute/);
    expect(err.message).not.toContain('0dccdde6');
    expect(refusedByThisModel(err)).toBe(true);
  });

  it('at or under the margin, with a cache breakpoint anywhere, or not a 429 rate limit: unchanged', () => {
    const atMargin = bodyOf(30_000 * MARGIN * 4);
    const e = rateLimited();
    expect(refusedForSize(e, atMargin)).toBe(e);
    const big = overMargin;
    const marked = { type: 'text' as const, text: 'x', cache_control: { type: 'ephemeral' as const } };
    for (const body of [
      bodyOf(big, { system: [marked] }),
      bodyOf(big, { tools: [{ name: 't', input_schema: {}, cache_control: { type: 'ephemeral' } }] }),
      { ...bodyOf(0), messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'a'.repeat(big), cache_control: { type: 'ephemeral' as const } }] }] },
      { ...bodyOf(0), messages: [{ role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 't1', content: [{ ...marked, text: 'a'.repeat(big) }] }] }] },
    ]) {
      expect(refusedForSize(e, body)).toBe(e);
    }
    const overloaded = new UpstreamError({ category: 'overloaded', status: 529, message: MESSAGE });
    expect(refusedForSize(overloaded, bodyOf(big))).toBe(overloaded);
    const other = new Error('socket hang up');
    expect(refusedForSize(other, bodyOf(big))).toBe(other);
  });

  it("counts the system prompt and tool results' text with the turns, not images or tool definitions", () => {
    const quarter = Math.ceil(overMargin / 4);
    const body: AnthropicRequest = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'a'.repeat(quarter),
      tools: [{ name: 't', description: 'd'.repeat(overMargin), input_schema: {} }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'a'.repeat(quarter) }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(overMargin) } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 't', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a'.repeat(quarter) }, { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a'.repeat(quarter) }] }] },
      ],
    };
    expect((refusedForSize(rateLimited(), body) as UpstreamError).category).toBe('invalid_request');
    // Without one of the four quarters it is under the margin: images and definitions did not count.
    body.system = 'a';
    expect((refusedForSize(rateLimited(), body) as UpstreamError).category).toBe('rate_limited');
  });
});

describe('withoutRetryAfter', () => {
  it('drops both Retry-After headers and keeps the rest; the same object when there is none', () => {
    expect(withoutRetryAfter({ 'retry-after': '30', 'retry-after-ms': '30000', 'anthropic-ratelimit-input-tokens-remaining': '0' })).toEqual({ 'anthropic-ratelimit-input-tokens-remaining': '0' });
    const plain = { 'x-ratelimit-remaining-requests': '9' };
    expect(withoutRetryAfter(plain)).toBe(plain);
    expect(withoutRetryAfter(undefined)).toBeUndefined();
  });
});
