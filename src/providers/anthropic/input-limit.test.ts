import { describe, expect, it } from 'vitest';
import { anthropicErrorFromResponse } from './errors.js';
import { hasCacheBreakpoint, inputLimitOf, promptChars } from './input-limit.js';
import type { AnthropicRequest } from './wire.js';

const MESSAGE = 'This request would exceed the rate limit for your organization (0dccdde6) of 30,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.';
const body429 = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: MESSAGE } });
const request = (extra: Partial<AnthropicRequest> = {}): AnthropicRequest => ({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'abcd' }], ...extra });

describe('inputLimitOf', () => {
  it("reads Anthropic's limit header first, else the number its message names (with its thousands commas)", () => {
    expect(inputLimitOf({ 'anthropic-ratelimit-input-tokens-limit': '40000' }, MESSAGE)).toBe(40_000);
    expect(inputLimitOf({}, MESSAGE)).toBe(30_000);
    expect(inputLimitOf({}, 'Number of request tokens has exceeded your per-minute rate limit')).toBeUndefined();
    expect(inputLimitOf({ 'anthropic-ratelimit-input-tokens-limit': 'lots' }, 'no number here')).toBeUndefined();
    // Digits only: what Number() would also read is no limit (a proxy's odd value must not teach a tiny one).
    for (const odd of ['0x10', '1e3', '0', '-5', '12.5']) expect(inputLimitOf({ 'anthropic-ratelimit-input-tokens-limit': odd }, 'no number here')).toBeUndefined();
    expect(inputLimitOf({ 'anthropic-ratelimit-input-tokens-limit': ' 40000 ' }, '')).toBe(40_000);
    expect(inputLimitOf({}, 'would exceed the rate limit of 1,0 input tokens per minute')).toBeUndefined();
    expect(inputLimitOf({}, 'would exceed the rate limit of 2,000,000 input tokens per minute')).toBe(2_000_000);
  });

  it("Anthropic's 429 carries the limit on its error; its other errors do not", () => {
    expect(anthropicErrorFromResponse(429, body429, { 'retry-after': '30' }, 0)).toMatchObject({ category: 'rate_limited', status: 429, inputTokenLimit: 30_000, retryAfterMs: 30_000 });
    const overloaded = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(anthropicErrorFromResponse(529, overloaded, { 'anthropic-ratelimit-input-tokens-limit': '30000' }, 0).inputTokenLimit).toBeUndefined();
    const tooLong = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' } });
    expect(anthropicErrorFromResponse(400, tooLong, { 'anthropic-ratelimit-input-tokens-limit': '30000' }, 0).inputTokenLimit).toBeUndefined();
  });
});

describe('what of a request counts', () => {
  it("the system prompt, turns and tool results' text; not images, tool calls or definitions", () => {
    const body = request({
      system: 'sys',
      tools: [{ name: 't', description: 'd'.repeat(1000), input_schema: {} }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(1000) } }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 't', input: { q: 'x'.repeat(1000) } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'result' }, { type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'more' }] }] },
      ],
    });
    expect(promptChars(body)).toBe('sys'.length + 'hello'.length + 'result'.length + 'more'.length);
    expect(promptChars(request({ system: [{ type: 'text', text: 'ab' }, { type: 'text', text: 'cd' }] }))).toBe(8);
  });

  it('a request with a cache breakpoint counts 0: it is never judged by its size', () => {
    expect(promptChars(request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a long prompt', cache_control: { type: 'ephemeral' } }] }] }))).toBe(0);
  });

  it('a cache breakpoint on the system prompt, a tool, a turn or a tool result is seen; none is none', () => {
    const mark = { type: 'ephemeral' as const };
    expect(hasCacheBreakpoint(request())).toBe(false);
    expect(hasCacheBreakpoint(request({ system: [{ type: 'text', text: 's', cache_control: mark }] }))).toBe(true);
    expect(hasCacheBreakpoint(request({ tools: [{ name: 't', input_schema: {}, cache_control: mark }] }))).toBe(true);
    expect(hasCacheBreakpoint(request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: mark }] }] }))).toBe(true);
    expect(hasCacheBreakpoint(request({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'x', cache_control: mark }] }] }] }))).toBe(true);
  });
});
