/**
 * An OpenAI-compatible upstream whose buffered answer reports no `usage`: the
 * gateway counts it from the text (as it does for streams) for the trace, the
 * cost and the limits, instead of recording 0 tokens and no cost. The answer
 * itself reaches the client as the upstream sent it.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type TraceRecord } from '../../src/observability/events.js';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
afterEach(async () => {
  await gw?.close(0);
  await upstream?.close();
  gw = upstream = undefined;
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
});
