/**
 * The Cohere adapter over a real socket, against the loopback Cohere server
 * (whose wire format the official SDK vouches for): buffered, streamed and
 * tool-calling answers come out as the same OpenAI shapes.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import type { ProviderConfig } from '../../config/types.js';
import type { AttemptContext, ProviderAdapter } from '../types.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { askBothWays } from '../../../test/helpers/ask-both-ways.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';
import { startCohereServer, type CohereServer } from '../../../test/servers/cohere-server.js';
import { createCohereAdapter } from './index.js';
import { expectOpenAINullFields } from '../../../test/helpers/openai-null-fields.js';
import { toolCallChoice } from '../../../test/helpers/tool-call-choice.js';

const MODEL = 'command-r-plus-08-2024';
const clock = new VirtualClock(Date.UTC(2026, 0, 1));
const CREATED = Math.floor(clock.now() / 1000);
let server: CohereServer;
let adapter: ProviderAdapter;

const ctx = (signal = new AbortController().signal): AttemptContext => ({ signal, model: MODEL, requestId: 'req-1' });
const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'alias', messages: [{ role: 'user', content }], ...extra });
const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

beforeAll(async () => {
  server = await startCohereServer({ apiKey: 'co-key' });
  const provider: ProviderConfig = {
    id: 'cohere',
    type: 'cohere',
    baseUrl: server.url,
    apiKey: 'co-key',
    locality: 'external',
    headers: { 'x-client-name': 'switchyard' },
    maxConnections: 4,
  };
  adapter = createCohereAdapter(provider, { clock, random: () => 0.5 });
});
afterAll(async () => {
  await adapter.close();
  await server.close();
});

describe('cohere adapter over a loopback socket', () => {
  it('buffered text: an OpenAI chat completion, Cohere wire request, auth and extra headers', async () => {
    server.enqueue({ kind: 'message', id: 'resp-1', text: 'Paris is the capital of France.' });
    const { response } = await adapter.chat(ask('Capital of France?', { temperature: 0.2, max_tokens: 50 }), ctx());
    expect(response).toEqual({
      id: 'resp-1',
      object: 'chat.completion',
      created: CREATED,
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Paris is the capital of France.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18, prompt_tokens_details: { cached_tokens: 0 } },
      system_fingerprint: null,
    });
    const req = server.requests.at(-1)!;
    expect(req.path).toBe('/v2/chat');
    expect(req.headers.authorization).toBe('Bearer co-key');
    expect(req.headers['x-client-name']).toBe('switchyard');
    expect(req.body).toEqual({
      model: MODEL,
      messages: [{ role: 'user', content: 'Capital of France?' }],
      stream: false,
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  it('streamed text: role chunk first, the same content, finish_reason and usage as buffered', async () => {
    const reply = { kind: 'message' as const, text: 'Paris is the capital of France.' };
    server.enqueue(reply, reply);
    const { buffered, out, chunks, malformed } = await askBothWays(adapter, ask('Capital?'), ctx());
    expect(server.requests.at(-1)!.body).toMatchObject({ stream: true });
    expect(server.requests.at(-1)!.headers.accept).toBe('text/event-stream');
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.every((c) => c.model === MODEL && c.object === 'chat.completion.chunk')).toBe(true);
    expect(out).toEqual({
      content: buffered.choices[0]!.message.content,
      finish_reason: buffered.choices[0]!.finish_reason,
      usage: buffered.usage,
    });
    expect(malformed).toBe(0);
  });

  it('tool call, buffered and streamed: the same tool_calls, finish_reason and usage', async () => {
    const reply = {
      kind: 'message' as const,
      toolPlan: 'I will look up the weather in Paris.',
      toolCalls: [{ id: 'get_weather_7k2', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    };
    server.enqueue(reply, reply);
    const { buffered, out } = await askBothWays(adapter, ask('Weather in Paris?', { tools }), ctx());
    expect(buffered.choices[0]).toEqual(toolCallChoice([{ id: 'get_weather_7k2', name: 'get_weather', arguments: '{"city":"Paris"}' }]));
    // The buffered request: the streamed one came after it.
    expect(server.requests.at(-2)!.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    expect(out).toEqual({
      content: null,
      tool_calls: buffered.choices[0]!.message.tool_calls,
      finish_reason: 'tool_calls',
      usage: buffered.usage,
    });
  });

  it('buffered and streamed answers carry the fields OpenAI always sends, as null (typed clients require them)', async () => {
    const reply = { kind: 'message' as const, text: 'Checking.', toolCalls: [{ id: 'get_weather_9x', name: 'get_weather', arguments: '{"city":"Oslo"}' }] };
    server.enqueue(reply, reply);
    const { buffered, chunks } = await askBothWays(adapter, ask('Weather in Oslo?', { tools }), ctx());
    expectOpenAINullFields(buffered, chunks);
  });

  it('a stream cut before message-end fails with a network error after the chunks that came', async () => {
    server.enqueue({ kind: 'message', text: 'one two three four', cutAfter: 4 });
    const stream = await adapter.chatStream(ask('count'), ctx());
    const seen: string[] = [];
    const err = await (async () => {
      for await (const c of stream) seen.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['', 'one ', 'two ']);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).category).toBe('network');
  });

  it('maps Cohere errors: 429 rate_limited with Retry-After, 498 auth, too-long prompt context_length', async () => {
    const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
    server.enqueue({ kind: 'error', status: 429, body: fixture('error-429.json'), headers: { 'retry-after': '2' } });
    const e429 = (await adapter.chat(ask('hi'), ctx()).catch((e: unknown) => e)) as UpstreamError;
    expect(e429).toMatchObject({ category: 'rate_limited', status: 429, retryAfterMs: 2000 });

    server.enqueue({ kind: 'error', status: 498, body: fixture('error-498.json') });
    const e498 = (await adapter.chatStream(ask('hi'), ctx()).catch((e: unknown) => e)) as UpstreamError;
    expect(e498).toMatchObject({ category: 'auth', status: 498 });
    expect(e498.message).not.toContain('co-key');

    server.enqueue({ kind: 'error', status: 400, body: fixture('error-400-too-long.json') });
    const e400 = (await adapter.chat(ask('hi'), ctx()).catch((e: unknown) => e)) as UpstreamError;
    expect(e400.category).toBe('context_length');
  });

  it('an unconvertible request fails as invalid_request before any upstream call', async () => {
    const before = server.requests.length;
    const err = await adapter
      .chat({ model: 'a', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f1' } }] }] }, ctx())
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ category: 'invalid_request' });
    expect(server.requests.length).toBe(before);
  });

  it('an aborted attempt rejects with the abort reason', async () => {
    const ac = new AbortController();
    const reason = new Error('attempt timeout');
    ac.abort(reason);
    await expect(adapter.chat(ask('hi'), ctx(ac.signal))).rejects.toBe(reason);
  });

  it('embeddings: /v2/embed answered in the OpenAI list shape', async () => {
    server.enqueue({ kind: 'embed', vectors: [[0.1, 0.2], [0.3, 0.4]], billedInputTokens: 5 });
    const { response } = await adapter.embeddings!({ model: 'e', input: ['a', 'b'] }, { ...ctx(), model: 'embed-english-v3.0' });
    expect(response).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
        { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
      ],
      model: 'embed-english-v3.0',
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
    expect(server.requests.at(-1)!.body).toEqual({
      model: 'embed-english-v3.0',
      texts: ['a', 'b'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
  });

  it('embeddings past the 96 a call holds: several calls, answered as one in input order, usage summed (found by fuzzing)', async () => {
    const texts = Array.from({ length: 200 }, (_, i) => 'x'.repeat(i));
    const before = server.requests.length;
    const { response } = await adapter.embeddings!({ model: 'e', input: texts }, { ...ctx(), model: 'embed-english-v3.0' });
    const calls = server.requests.slice(before).map((r) => (r.body as { texts: string[] }).texts);
    expect(calls.map((t) => t.length).sort((a, b) => a - b)).toEqual([8, 96, 96]);
    // The fake's vector starts with the text's length / 100: each vector is its own text's.
    expect(response.data.map((d) => [d.index, (d.embedding as number[])[0]])).toEqual(texts.map((t, i) => [i, t.length / 100]));
    expect(response.usage).toEqual({ prompt_tokens: 600, total_tokens: 600 }); // the fake bills 3 a text
  });
});
