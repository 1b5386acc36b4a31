/**
 * End to end over loopback: an OpenAI-compatible upstream that ignores
 * `stream: true` and answers one `application/json` completion (older vLLM
 * builds, proxies in front of a backend that cannot stream). The official
 * `openai` client streaming through the gateway reads it as an ordinary
 * stream; the attempt is a success whose usage is the body's, for the trace,
 * the cost and the client key's limits. A JSON body that is no completion fails
 * over as a buffered one does: an error object sent with 200 as the error it
 * stands for, anything else as a malformed answer.
 */
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type TraceRecord } from '../../observability/events.js';
import { assembleStream } from '../../../test/helpers/assemble-stream.js';
import { openaiProvider, startChatOver, startGateway, type TestGateway } from '../../../test/helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk, type RawUpstream } from '../../../test/helpers/raw-upstream.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';

let gw: TestGateway | undefined;
let upstreams: RawUpstream[] = [];
afterEach(async () => {
  await gw?.close(0);
  for (const u of upstreams) await u.close();
  gw = undefined;
  upstreams = [];
});

async function upstream(handler: Parameters<typeof startRawUpstream>[0]): Promise<RawUpstream> {
  const u = await startRawUpstream(handler);
  upstreams.push(u);
  return u;
}

function traces(): { bus: EventBus; traced: TraceRecord[] } {
  const traced: TraceRecord[] = [];
  const bus = new EventBus();
  bus.on('request', (t) => traced.push(t));
  return { bus, traced };
}

const ANSWER = {
  id: 'chatcmpl-json-1',
  object: 'chat.completion',
  created: 1_700_000_321,
  model: 'served-7b',
  system_fingerprint: 'fp_json',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Paris is the capital of France.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
};

/** Answers every request, stream or not, with one JSON completion. */
const jsonAnswer =
  (answer: unknown, contentType = 'application/json; charset=utf-8') =>
  (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': contentType });
    res.end(JSON.stringify(answer));
  };

const messages = [{ role: 'user' as const, content: 'What is the capital of France?' }];

describe('a stream request answered with a JSON completion', () => {
  it('reaches the openai client as a stream: role, content, finish, usage, one id, created and model throughout', async () => {
    const up = await upstream(jsonAnswer(ANSWER));
    const { bus, traced } = traces();
    gw = await startChatOver(up.url, {}, { model: 'served-7b', price: { input: 1, output: 2 } }, { bus });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

    const { data: stream, response } = await client.chat.completions
      .create({ model: 'chat', messages, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-switchyard-deployment')).toBe('up/served-7b');
    expect(response.headers.get('x-switchyard-attempts')).toBe('1');
    const { out, chunks } = await assembleStream(stream);

    expect(out).toEqual({ content: 'Paris is the capital of France.', finish_reason: 'stop', usage: ANSWER.usage });
    expect(chunks.map((c) => (c.choices[0] ? [c.choices[0].delta, c.choices[0].finish_reason] : 'usage'))).toEqual([
      [{ role: 'assistant', content: '' }, null],
      [{ content: 'Paris is the capital of France.' }, null],
      [{}, 'stop'],
      'usage',
    ]);
    for (const c of chunks) {
      expect(c).toMatchObject({ id: 'chatcmpl-json-1', object: 'chat.completion.chunk', created: 1_700_000_321, model: 'served-7b', system_fingerprint: 'fp_json' });
    }
    // The upstream was asked for a stream, as any stream attempt asks.
    expect(up.hits[0]!.body).toMatchObject({ stream: true, model: 'served-7b' });

    await expect.poll(() => traced.length).toBe(1);
    const t = traced[0]!;
    expect(t).toMatchObject({ stream: true, status: 200, streamOutcome: 'completed', deployment: 'up/served-7b', retryCount: 0, malformedEvents: 0 });
    expect(t.attempts).toHaveLength(1);
    expect(t.attempts[0]).toMatchObject({ provider: 'up', model: 'served-7b', status: 200, errorType: null });
    expect(t.usage).toEqual({ promptTokens: 12, completionTokens: 7 });
    // input 1 and output 2 USD per million tokens
    expect(t.costUsd).toBeCloseTo((12 * 1 + 7 * 2) / 1e6, 12);
  });

  it('on the wire: server-sent events ending data: [DONE]', async () => {
    const up = await upstream(jsonAnswer(ANSWER));
    gw = await startChatOver(up.url, {}, { model: 'served-7b' });
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages, stream: true, stream_options: { include_usage: true } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events).toHaveLength(5); // role, content, finish, usage, [DONE]
    expect(events.every((e) => e.startsWith('data: '))).toBe(true);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events.slice(0, -1).map((e) => (JSON.parse(e.slice(6)) as { id: string }).id)).toEqual(Array(4).fill('chatcmpl-json-1'));
  });

  it('without include_usage the client gets no usage chunk, but the trace counts the body’s usage', async () => {
    const up = await upstream(jsonAnswer(ANSWER, 'application/json'));
    const { bus, traced } = traces();
    gw = await startChatOver(up.url, {}, { model: 'served-7b' }, { bus });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

    const { out, chunks } = await assembleStream(await client.chat.completions.create({ model: 'chat', messages, stream: true }));
    expect(out.content).toBe('Paris is the capital of France.');
    expect(out.usage).toBeUndefined();
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    await expect.poll(() => traced.length).toBe(1);
    expect(traced[0]!.usage).toEqual({ promptTokens: 12, completionTokens: 7 });
  });

  it('tool calls: the SDK’s stream helper assembles each call from its one delta', async () => {
    const up = await upstream(
      jsonAnswer({
        id: 'chatcmpl-json-2',
        object: 'chat.completion',
        created: 1_700_000_400,
        model: 'served-7b',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
                { id: 'call_t', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 },
      }),
    );
    gw = await startChatOver(up.url, {}, { model: 'served-7b' });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
    const fn = (name: string) => ({ type: 'function' as const, function: { name, parameters: { type: 'object', properties: {} } } });
    const runner = client.chat.completions.stream({ model: 'chat', messages, tools: [fn('get_weather'), fn('get_time')] });
    const final = await runner.finalChatCompletion();
    expect(final.id).toBe('chatcmpl-json-2');
    expect(final.model).toBe('served-7b');
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
      { id: 'call_t', type: 'function', function: { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' } },
    ]);
  });

  it('an Azure deployment answering JSON streams the same way', async () => {
    const up = await upstream(jsonAnswer(ANSWER));
    gw = await startGateway(
      {
        providers: [{ id: 'az', type: 'azure', baseUrl: up.url, apiKey: '${AZ_KEY}', apiVersion: '2024-10-21' }],
        models: [{ name: 'chat', deployments: [{ provider: 'az', model: 'gpt-4o-prod' }] }],
      },
      { env: { AZ_KEY: 'az-secret' } },
    );
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
    const { out } = await assembleStream(await client.chat.completions.create({ model: 'chat', messages, stream: true, stream_options: { include_usage: true } }));
    expect(out).toEqual({ content: 'Paris is the capital of France.', finish_reason: 'stop', usage: ANSWER.usage });
    expect(up.hits[0]!.headers['api-key']).toBe('az-secret');
  });

  it('the body’s usage counts against the client key’s tpm, as a stream’s reported usage does', async () => {
    // 12 + 190 tokens: far above what the request was estimated at (its prompt and max_tokens 10).
    const up = await upstream(jsonAnswer({ ...ANSWER, usage: { prompt_tokens: 12, completion_tokens: 190, total_tokens: 202 } }));
    const clock = new VirtualClock();
    gw = await startChatOver(up.url, { resilience: { maxRetries: 0 }, keys: [{ id: 'k', key: '${K}', tpm: 150 }] }, { model: 'served-7b' }, { clock, env: { K: 'sk-k-0123456789' } });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'sk-k-0123456789', maxRetries: 0 });
    const ask = () => client.chat.completions.create({ model: 'chat', messages, stream: true, max_tokens: 10 });

    const { out } = await assembleStream(await ask());
    expect(out.content).toBe('Paris is the capital of France.');
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limited');
    expect(up.hits).toHaveLength(1);
  });
});

describe('a stream request answered with JSON that is no completion', () => {
  // An error object is classified as the HTTP error it stands for (a 500 saying "overloaded"); the rest are malformed.
  const badBodies: [string, unknown, string][] = [
    ['an error object with 200', { error: { message: 'model overloaded, try later', type: 'server_error', code: null } }, 'overloaded'],
    ['an object without choices', { id: 'x', object: 'chat.completion', model: 'served-7b' }, 'server'],
    ['choices that are not objects', { id: 'x', object: 'chat.completion', model: 'served-7b', choices: [null] }, 'server'],
  ];

  for (const [what, body, category] of badBodies) {
    it(`${what}: fails over (${category}), and the next candidate serves the stream`, async () => {
      const bad = await upstream(jsonAnswer(body));
      const good = await upstream((res) => {
        sseHead(res);
        res.end(chunk('good-1', { role: 'assistant', content: '' }) + chunk('good-1', { content: 'Paris.' }) + chunk('good-1', {}, 'stop') + usageChunk('good-1', 9, 2) + 'data: [DONE]\n\n');
      });
      const { bus, traced } = traces();
      gw = await startGateway(
        {
          resilience: { maxRetries: 0 },
          providers: [openaiProvider('bad', bad.url), openaiProvider('good', good.url)],
          models: [
            {
              name: 'chat',
              strategy: 'cost',
              deployments: [
                { provider: 'bad', model: 'served-7b', price: { input: 1, output: 1 } },
                { provider: 'good', model: 'good-1', price: { input: 2, output: 2 } },
              ],
            },
          ],
        },
        { bus },
      );
      const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

      const { data, response } = await client.chat.completions.create({ model: 'chat', messages, stream: true }).withResponse();
      const { out } = await assembleStream(data);
      expect(out.content).toBe('Paris.');
      expect(response.headers.get('x-switchyard-deployment')).toBe('good/good-1');
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
      await expect.poll(() => traced.length).toBe(1);
      expect(traced[0]!.attempts.map((a) => [a.provider, a.errorType])).toEqual([
        ['bad', category],
        ['good', null],
      ]);
      expect(traced[0]!.usage).toEqual({ promptTokens: 9, completionTokens: 2 });
    });
  }
});
