/**
 * Prompt-cache writes, end to end over real sockets: a client's `cache_control`
 * breakpoints (OpenAI-format, as LiteLLM and Portkey take them) reach Anthropic
 * on the blocks they mark; the writes Anthropic reports come back to the client
 * as `usage.cache_creation_input_tokens`, and a deployment whose price names
 * `cacheWrite` has them priced at it in the trace, buffered and streamed. An
 * OpenAI-compatible upstream reporting the same field (a LiteLLM proxy in front
 * of Anthropic) is priced alike.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { TraceRecord } from '../../src/observability/events.js';
import { startGateway, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { answersWithUsage, startRawUpstream } from '../helpers/raw-upstream.js';
import { startAnthropicServer } from '../servers/anthropic-server.js';

// 100 uncached in at 3 $/M, 4,000 written at 3.75 $/M, 1,000 read at 0.3 $/M, 50 out at 15 $/M.
const PRICE = { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 };
const BILLED = (100 * 3 + 4000 * 3.75 + 1000 * 0.3 + 50 * 15) / 1e6;
const WRITES_AS_INPUT = (4100 * 3 + 1000 * 0.3 + 50 * 15) / 1e6;

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

function tracesOf(gw: TestGateway): TraceRecord[] {
  const traces: TraceRecord[] = [];
  gw.gateway.bus.on('request', (t) => traces.push(t));
  return traces;
}

describe('Anthropic prompt caching through the gateway', () => {
  async function setup(price: Record<string, number> = PRICE) {
    const anthropic = await startAnthropicServer(() => ({ text: 'Chapter 2 is about safety.', usage: { input_tokens: 100, cache_creation_input_tokens: 4000, cache_read_input_tokens: 1000, output_tokens: 50 } }));
    closers.push(() => anthropic.close());
    const gw = await startGateway({
      providers: [{ id: 'an', type: 'anthropic', baseUrl: anthropic.url, apiKey: '${K}' }],
      models: [{ name: 'claude', deployments: [{ provider: 'an', model: 'claude-sonnet-4-5', price }] }],
    }, { env: { K: 'k' } });
    closers.push(() => gw.close(0));
    return { anthropic, gw, traces: tracesOf(gw), client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 }) };
  }

  const messages = [
    { role: 'system', content: [{ type: 'text', text: 'Answer from the handbook.' }, { type: 'text', text: '<the whole handbook>', cache_control: { type: 'ephemeral' } }] },
    { role: 'user', content: 'What does chapter 2 say?' },
  ] as unknown as OpenAI.ChatCompletionMessageParam[];

  it('buffered: the breakpoint reaches Anthropic on its block, the writes come back in the usage and are priced at cacheWrite', async () => {
    const { anthropic, client, traces } = await setup();
    const answer = await client.chat.completions.create({ model: 'claude', messages });
    expect(anthropic.requests.at(-1)!.body!.system).toEqual([
      { type: 'text', text: 'Answer from the handbook.' },
      { type: 'text', text: '<the whole handbook>', cache_control: { type: 'ephemeral' } },
    ]);
    expect(answer.usage).toMatchObject({ prompt_tokens: 5100, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 1000 }, cache_creation_input_tokens: 4000 });
    await expect.poll(() => traces.length).toBe(1);
    expect(traces[0]!.costUsd).toBeCloseTo(BILLED, 12);
  });

  it('streamed: the usage chunk carries the writes, and the trace prices them at cacheWrite', async () => {
    const { client, traces } = await setup();
    const stream = await client.chat.completions.create({ model: 'claude', messages, stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) usage = c.usage ?? usage;
    expect(usage).toMatchObject({ prompt_tokens: 5100, cache_creation_input_tokens: 4000 });
    await expect.poll(() => traces.length).toBe(1);
    expect(traces[0]!.costUsd).toBeCloseTo(BILLED, 12);
  });

  it('without cacheWrite in the price, writes are priced as input, as before', async () => {
    const { client, traces } = await setup({ input: 3, output: 15, cachedInput: 0.3 });
    await client.chat.completions.create({ model: 'claude', messages });
    await expect.poll(() => traces.length).toBe(1);
    expect(traces[0]!.costUsd).toBeCloseTo(WRITES_AS_INPUT, 12);
  });

  it('a breakpoint Anthropic would refuse is refused as the client\'s error, naming it, without a call', async () => {
    const { anthropic, gw } = await setup();
    const before = anthropic.requests.length;
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', messages: [{ role: 'user', content: 'hi', cache_control: { type: 'ephemeral', ttl: '1d' } }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; param: string } };
    expect(body.error.param).toBe('messages[0].cache_control');
    expect(body.error.message).toMatch(/cache_control/);
    expect(anthropic.requests.length).toBe(before);
  });
});

describe('an OpenAI-compatible upstream reporting cache writes (a LiteLLM proxy in front of Anthropic)', () => {
  const USAGE = '{"prompt_tokens":5100,"completion_tokens":50,"total_tokens":5150,"prompt_tokens_details":{"cached_tokens":1000},"cache_creation_input_tokens":4000}';
  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'buffered'}: the writes are priced at cacheWrite`, async () => {
      const upstream = await startRawUpstream(answersWithUsage(USAGE));
      closers.push(() => upstream.close());
      const gw = await startChatOver(upstream.url, {}, { price: PRICE });
      closers.push(() => gw.close(0));
      const traces = tracesOf(gw);
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', stream, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.text();
      await expect.poll(() => traces.length).toBe(1);
      expect(traces[0]!.costUsd).toBeCloseTo(BILLED, 12);
    });
  }
});
