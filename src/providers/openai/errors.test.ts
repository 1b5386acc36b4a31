import { describe, expect, it } from 'vitest';
import { openAIErrorOf } from './errors.js';

const category = (body: unknown) => openAIErrorOf(body, {})?.category;

describe('openAIErrorOf: an error object sent with 200, as the HTTP error it stands for', () => {
  it.each([
    ['code rate_limit_exceeded', { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, 'rate_limited'],
    ['code insufficient_quota', { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } }, 'rate_limited'],
    ['a status as a string (LiteLLM, Azure)', { error: { message: 'litellm.RateLimitError', type: 'None', code: '429' } }, 'rate_limited'],
    ['a numeric status (vLLM)', { error: { message: 'bad', type: 'BadRequestError', code: 400 } }, 'invalid_request'],
    ['Azure `status`', { error: { code: 'SomethingElse', message: 'bad', status: 400 } }, 'invalid_request'],
    ['code context_length_exceeded', { error: { message: "This model's maximum context length is 8192 tokens.", code: 'context_length_exceeded' } }, 'context_length'],
    ['code content_filter', { error: { message: 'filtered', code: 'content_filter' } }, 'content_policy'],
    ['code invalid_api_key', { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }, 'auth'],
    ['code model_not_found', { error: { message: 'The model does not exist', type: 'invalid_request_error', code: 'model_not_found' } }, 'not_found'],
    ['type server_error saying overloaded', { error: { message: 'The engine is currently overloaded', type: 'server_error', code: null } }, 'overloaded'],
    ['type server_error', { error: { message: 'The server had an error', type: 'server_error', code: null } }, 'server'],
    ['only a message that names a rate limit', { error: { message: 'Rate limit exceeded' } }, 'rate_limited'],
    ['only a message that names nothing', { error: { message: 'bad things happened' } }, 'server'],
    ['a message that reads like a bad request, without a status: not the client’s fault', { error: { message: "Invalid 'messages'" } }, 'server'],
    ['a string', { error: 'upstream exploded' }, 'server'],
    ['null', { error: null }, 'server'],
    ['a code that is an Object.prototype name', { error: { message: 'x', code: 'constructor', type: 'toString' } }, 'server'],
    ['a status out of range', { error: { message: 'x', code: 200 } }, 'server'],
    ['wrapped in an array', [{ error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }], 'rate_limited'],
  ])('%s → %s', (_label, body, expected) => {
    expect(category(body)).toBe(expected);
  });

  it('no error member: undefined', () => {
    expect(openAIErrorOf({ choices: [] }, {})).toBeUndefined();
    expect(openAIErrorOf('text', {})).toBeUndefined();
  });

  it('keeps the message, code and param, carries the answer’s headers, and counts as having reached the upstream; no status of its own', () => {
    const headers = { 'x-ratelimit-remaining-requests': '0' };
    const err = openAIErrorOf({ error: { message: 'Too long', type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } }, headers)!;
    expect(err).toMatchObject({ message: 'Too long', providerCode: 'context_length_exceeded', param: 'messages', status: undefined, headers, reachedUpstream: true });
  });
});
