/**
 * Fields OpenAI refuses with 400 are refused by the gateway itself, over a real
 * socket and before any upstream is called (an audit found each answered 200: this
 * loopback upstream, like a lenient OpenAI-compatible server, serves anything); the
 * valid forms, and fields the gateway does not know, reach the upstream as sent.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { answersCompletion, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { expectError } from './wire.js';

let up: RawUpstream;
let gw: TestGateway;

beforeAll(async () => {
  up = await startRawUpstream(answersCompletion('m', 'ok', 3, 1));
  gw = await startChatOver(up.url);
});
afterAll(async () => {
  await gw?.close(0);
  await up?.close();
});

const post = (extra: Record<string, unknown>) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });

it.each<[string, string, Record<string, unknown>]>([
  ['a response_format type OpenAI has not', 'response_format.type', { response_format: { type: 'xml' } }],
  ['logprobs as a string', 'logprobs', { logprobs: 'x' }],
  ['top_logprobs -1', 'top_logprobs', { logprobs: true, top_logprobs: -1 }],
  ['include_usage as a string', 'stream_options.include_usage', { stream: true, stream_options: { include_usage: 'yes' } }],
  ['logit_bias as a number', 'logit_bias', { logit_bias: 5 }],
  ['user as an object', 'user', { user: {} }],
  ['an empty tool name', 'tools[0].function.name', { tools: [{ type: 'function', function: { name: '' } }] }],
  ['modalities as a number', 'modalities', { modalities: 5 }],
])('%s: 400 invalid_request naming %s, and no upstream call', async (_name, param, extra) => {
  const before = up.hits.length;
  const res = await post(extra);
  const e = expectError(400, await res.json(), res.status, 'invalid_request');
  expect(e.param).toBe(param);
  expect(e.message).toContain(param.split('.')[0]!.replace(/\[\d+\]$/, ''));
  // Refused before routing: no attempt made, so none reported.
  expect(res.headers.get('x-switchyard-attempts')).toBeNull();
  expect(up.hits.length).toBe(before);
});

it('the valid forms, and fields the gateway does not know, reach the upstream as sent', async () => {
  const fields = {
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
    logprobs: true,
    top_logprobs: 2,
    logit_bias: { '50256': -100 },
    user: 'u-1',
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    modalities: ['text'],
    reasoning_effort: 'a-level-openai-adds-later',
    x_vendor_flag: { deep: [1, 2] },
  };
  const res = await post(fields);
  expect(res.status, await res.clone().text()).toBe(200);
  expect(up.hits.at(-1)!.body).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });
});
