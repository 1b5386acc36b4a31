/**
 * An OpenAI-compatible upstream whose buffered answer reports no `usage`: the
 * gateway counts it from the text (as it does for streams) for the trace, the
 * cost and the limits, instead of recording 0 tokens and no cost. The answer
 * itself reaches the client as the upstream sent it.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type TraceRecord } from '../../src/observability/events.js';
import { startChatOver, startCostPair, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { sseData } from '../server/wire.js';

/** The usage of a stream's usage chunk, as the client reads it. */
const usageChunk = (text: string): unknown =>
  sseData(text)
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as { usage?: unknown })
    .find((c) => c.usage)?.usage;

/** A streamed request asking for usage; the whole SSE text, which must end with [DONE]. */
async function streamWithUsage(g: TestGateway): Promise<string> {
  const res = await fetch(`${g.baseURL}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = await res.text();
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  return text;
}

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
let spare: RawUpstream | undefined;
afterEach(async () => {
  await gw?.close(0);
  await upstream?.close();
  await spare?.close();
  gw = upstream = spare = undefined;
});

const TEXT = 'Forty characters of answer, exactly so..'; // 40 characters: 10 tokens at ~4 a token

describe('a buffered answer without usage', () => {
  it('is counted from its text for the trace and the cost, and forwarded unchanged', async () => {
    upstream = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'up-1', choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }] }));
    });
    const traced: TraceRecord[] = [];
    const bus = new EventBus();
    bus.on('request', (t) => traced.push(t));
    gw = await startChatOver(upstream.url, {}, { model: 'up-1', price: { input: 1, output: 2 } }, { bus });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Say something of forty characters, please.' }], max_tokens: 50 });
    expect(answer.choices[0]!.message.content).toBe(TEXT);
    expect(answer.usage).toBeUndefined();

    await expect.poll(() => traced.length).toBe(1);
    const t = traced[0]!;
    expect(t.usage.completionTokens).toBe(10);
    expect(t.usage.promptTokens).toBeGreaterThan(0);
    // input 1 and output 2 USD per million tokens
    expect(t.costUsd).toBeCloseTo((t.usage.promptTokens * 1 + 10 * 2) / 1e6, 12);
  });

  // Reasoning is generated and billed as output: counted as the answer's text is.
  it('with reasoning_content, counts the reasoning too', async () => {
    upstream = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'up-1', choices: [{ index: 0, message: { role: 'assistant', content: TEXT, reasoning_content: TEXT + TEXT }, finish_reason: 'stop' }] }));
    });
    const traced: TraceRecord[] = [];
    const bus = new EventBus();
    bus.on('request', (t) => traced.push(t));
    gw = await startChatOver(upstream.url, {}, { model: 'up-1' }, { bus });
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
    await res.text();
    await expect.poll(() => traced.length).toBe(1);
    expect(traced[0]!.usage.completionTokens).toBe(30);
  });

  // Counted as nothing before: a legacy answer carries its call in function_call, not tool_calls.
  it('with a legacy function_call, is counted from its name and arguments', async () => {
    const call = { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' }; // 11 + 33 characters: 11 tokens
    upstream = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'up-1', choices: [{ index: 0, message: { role: 'assistant', content: null, function_call: call }, finish_reason: 'function_call' }] }));
    });
    const traced: TraceRecord[] = [];
    const bus = new EventBus();
    bus.on('request', (t) => traced.push(t));
    gw = await startChatOver(upstream.url, {}, { model: 'up-1' }, { bus });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'chat', functions: [{ name: 'get_weather' }], messages: [{ role: 'user', content: 'Weather in Paris?' }] }),
    });
    expect(((await res.json()) as { choices: { message: unknown }[] }).choices[0]!.message).toEqual({ role: 'assistant', content: null, function_call: call });
    await expect.poll(() => traced.length).toBe(1);
    expect(traced[0]!.usage.completionTokens).toBe(11);
  });

  it('fails the attempt when it is malformed inside its framing, so the next candidate serves (it was a 500, traced 499)', async () => {
    // Balanced brackets around a bad literal pass the shape scan; without usage the answer is parsed, and fails.
    upstream = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"half"},"finish_reason":nope}]}');
    });
    spare = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'chatcmpl-2', object: 'chat.completion', created: 1, model: 'spare-1', choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }] }));
    });
    gw = await startCostPair({ id: 'first', url: upstream.url, model: 'up-1' }, { id: 'second', url: spare.url, model: 'spare-1' });
    const traced: TraceRecord[] = [];
    gw.gateway.bus.on('request', (t) => traced.push(t));
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-deployment')).toBe('second/spare-1');
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(TEXT);
    await expect.poll(() => traced.length).toBe(1);
    expect(traced[0]).toMatchObject({ status: 200, fallbackUsed: false, routedProvider: 'second' });
    expect(traced[0]!.attempts.map((a) => [a.provider, a.errorType])).toEqual([
      ['first', 'server'],
      ['second', null],
    ]);
  });

  it('with counts that are not counts (400 digits, a string), is counted the same: the trace holds numbers', async () => {
    const answer = JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'up-1', choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
    const bodies = [answer.replace('"prompt_tokens":0', `"prompt_tokens":${'9'.repeat(400)}`), answer.replace('"completion_tokens":0', '"completion_tokens":"a"')];
    upstream = await startRawUpstream((res, _hit, n) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(bodies[n - 1]);
    });
    const traced: TraceRecord[] = [];
    const bus = new EventBus();
    bus.on('request', (t) => traced.push(t));
    gw = await startChatOver(upstream.url, {}, { model: 'up-1', price: { input: 1, output: 2 } }, { bus });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });
      expect(res.status).toBe(200);
      await res.text();
    }
    await expect.poll(() => traced.length).toBe(2);
    // The first: its prompt counted (an estimate), its completion 0 as reported; the second: its completion counted from the text.
    expect(traced[0]!.usage).toEqual({ promptTokens: expect.any(Number), completionTokens: 0 });
    expect(traced[0]!.usage.promptTokens).toBeGreaterThan(0);
    expect(traced[1]!.usage).toEqual({ promptTokens: 0, completionTokens: 10 });
    for (const t of traced) expect(Number.isFinite(t.costUsd)).toBe(true);
  });
});

describe('a stream whose usage chunk holds counts that are not counts', () => {
  it('is traced with counted numbers, not the string "0a", null or a negative count', async () => {
    upstream = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
      res.write(ev({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'up-1', choices: [{ index: 0, delta: { content: TEXT }, finish_reason: null }] }));
      res.write(ev({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'up-1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
      res.end(ev({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'up-1', choices: [], usage: { prompt_tokens: 'a', completion_tokens: -5, total_tokens: null } }) + 'data: [DONE]\n\n');
    });
    const traced: TraceRecord[] = [];
    const bus = new EventBus();
    bus.on('request', (t) => traced.push(t));
    gw = await startChatOver(upstream.url, {}, { model: 'up-1', price: { input: 1, output: 2 } }, { bus });
    const text = await streamWithUsage(gw);
    await expect.poll(() => traced.length).toBe(1);
    const t = traced[0]!;
    // The client's usage chunk says what the gateway counted, not the upstream's garbage.
    const usage = usageChunk(text);
    expect(usage).toEqual({ prompt_tokens: t.usage.promptTokens, completion_tokens: 10, total_tokens: t.usage.promptTokens + 10 });
    expect(t.usage.completionTokens).toBe(10);
    expect(typeof t.usage.promptTokens).toBe('number');
    expect(t.usage.promptTokens).toBeGreaterThan(0);
    expect(t.costUsd).toBeCloseTo((t.usage.promptTokens * 1 + 10 * 2) / 1e6, 12);
  });
});

/**
 * An Anthropic-format server that reports no usage (or counts that are not numbers; some
 * Anthropic-compatible servers send none): the gateway counts it, as for any upstream,
 * rather than reading the missing counts as 0 — a free answer that took nothing from the limits.
 */
describe('an anthropic answer without usage', () => {
  async function anthropicGateway(handler: Parameters<typeof startRawUpstream>[0]): Promise<TraceRecord[]> {
    upstream = await startRawUpstream(handler);
    const traced: TraceRecord[] = [];
    const bus = new EventBus();
    bus.on('request', (t) => traced.push(t));
    gw = await startGateway(
      {
        providers: [{ id: 'up', type: 'anthropic', baseUrl: new URL(upstream.url).origin, apiKey: '${UP_KEY}' }],
        models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'claude-1', price: { input: 1, output: 2 } }] }],
      },
      { env: { UP_KEY: 'k' }, bus },
    );
    return traced;
  }

  for (const [label, usage] of [
    ['none', undefined],
    ['counts that are strings', { input_tokens: '12', output_tokens: '10' }],
  ] as const) {
    it(`buffered, ${label}: counted from the text for the trace, the cost and the client`, async () => {
      const traced = await anthropicGateway((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-1', content: [{ type: 'text', text: TEXT }], stop_reason: 'end_turn', usage }));
      });
      const res = await fetch(`${gw!.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Say something of forty characters, please.' }] }) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
      await expect.poll(() => traced.length).toBe(1);
      const t = traced[0]!;
      expect(t.usage.completionTokens).toBe(10);
      expect(t.usage.promptTokens).toBeGreaterThan(0);
      expect(body.usage).toMatchObject({ prompt_tokens: t.usage.promptTokens, completion_tokens: 10 });
      expect(t.costUsd).toBeCloseTo((t.usage.promptTokens * 1 + 10 * 2) / 1e6, 12);
    });
  }

  it('streamed without any usage: counted, and the client\'s usage chunk says so', async () => {
    const traced = await anthropicGateway((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const events = [
        { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-1', content: [] } },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' } },
        { type: 'message_stop' },
      ];
      res.end(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''));
    });
    const text = await streamWithUsage(gw!);
    await expect.poll(() => traced.length).toBe(1);
    const t = traced[0]!;
    expect(t.usage.completionTokens).toBe(10);
    expect(t.usage.promptTokens).toBeGreaterThan(0);
    const usage = usageChunk(text);
    expect(usage).toEqual({ prompt_tokens: t.usage.promptTokens, completion_tokens: 10, total_tokens: t.usage.promptTokens + 10 });
  });
});

/**
 * Text that is not English, without usage: counted as the prompt is weighed (text-weight.ts),
 * not at 4 characters a token, which counted a CJK answer at a fraction of its tokens.
 */
describe('a non-ASCII answer without usage', () => {
  // 10 CJK characters (3 UTF-8 bytes each), a space, 4 emoji (2 UTF-16 units, 4 bytes each): 19 units, 47 bytes.
  const WORDS = ['東京の', '天気は', '晴れです', ' ', '🙂🙂', '🙂🙂'];
  // 19 / 4 + (47 - 19) × 0.75 = 4.75 + 21 → 26 (at 4 characters a token: 5).
  const WORDS_TOKENS = 26;
  // 'get_weather' and '{"city":"東京"}': 24 units, 28 bytes; 24 / 4 + 4 × 0.75 = 9 (at 4 a token: 6).
  const CALL = { name: 'get_weather', arguments: '{"city":"東京"}' };
  const CALL_TOKENS = 9;

  async function tracedGateway(handler: Parameters<typeof startRawUpstream>[0]): Promise<TraceRecord[]> {
    upstream = await startRawUpstream(handler);
    const traced: TraceRecord[] = [];
    const bus = new EventBus();
    bus.on('request', (t) => traced.push(t));
    gw = await startChatOver(upstream.url, {}, { model: 'up-1' }, { bus });
    return traced;
  }

  it('buffered: its text and its tool call weighed as the prompt is', async () => {
    const messages = [{ role: 'assistant', content: WORDS.join('') }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: CALL }] }];
    const traced = await tracedGateway((res, _hit, n) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'up-1', choices: [{ index: 0, message: messages[n - 1], finish_reason: 'stop' }] }));
    });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${gw!.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });
      expect(res.status).toBe(200);
      await res.text();
    }
    await expect.poll(() => traced.length).toBe(2);
    expect(traced.map((t) => t.usage.completionTokens)).toEqual([WORDS_TOKENS, CALL_TOKENS]);
  });

  it('streamed: its pieces and its tool call weighed the same, for the trace and the client', async () => {
    const ev = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'up-1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const streams = [
      [...WORDS.map((w) => ev({ content: w })), ev({}, 'stop')],
      [ev({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: CALL.name, arguments: '' } }] }), ev({ tool_calls: [{ index: 0, function: { arguments: CALL.arguments } }] }), ev({}, 'tool_calls')],
    ];
    const traced = await tracedGateway((res, _hit, n) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(streams[n - 1]!.join('') + 'data: [DONE]\n\n');
    });
    const usage = [usageChunk(await streamWithUsage(gw!)), usageChunk(await streamWithUsage(gw!))];
    await expect.poll(() => traced.length).toBe(2);
    expect(traced.map((t) => t.usage.completionTokens)).toEqual([WORDS_TOKENS, CALL_TOKENS]);
    expect(usage).toMatchObject([{ completion_tokens: WORDS_TOKENS }, { completion_tokens: CALL_TOKENS }]);
  });
});
