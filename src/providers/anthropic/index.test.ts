/**
 * The adapter over a real socket, against the loopback Anthropic server (which
 * the official SDK vouches for in test/servers/anthropic-server.test.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { startAnthropicServer, type AnthropicServer, type MessageReply } from '../../../test/servers/anthropic-server.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';
import type { ProviderConfig } from '../../config/types.js';
import type { ChatCompletionChunk, ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { AttemptContext, ProviderAdapter } from '../types.js';
import { createAnthropicAdapter } from './index.js';
import { expectOpenAINullFields } from '../../../test/helpers/openai-null-fields.js';

const MODEL = 'claude-sonnet-4-20250514';
const KEY = 'sk-ant-loopback';
const clock = new VirtualClock(Date.UTC(2026, 0, 1));
let server: AnthropicServer;
let adapter: ProviderAdapter;

function provider(over: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id: 'anthropic',
    type: 'anthropic',
    baseUrl: server.url,
    apiKey: KEY,
    locality: 'external',
    headers: {},
    maxConnections: 4,
    ...over,
  };
}

function ctx(signal = new AbortController().signal): AttemptContext {
  return { signal, model: MODEL, requestId: 'req-test' };
}

beforeAll(async () => {
  server = await startAnthropicServer(undefined, { apiKey: KEY });
  adapter = createAnthropicAdapter(provider(), { clock, random: () => 0.5 });
});
afterAll(async () => {
  await adapter.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

const weatherRequest: ChatRequest = {
  model: 'smart',
  messages: [
    { role: 'system', content: 'You are a weather bot.' },
    { role: 'user', content: 'Weather in Paris?' },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Get the weather',
        parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
    },
  ],
};
const toolReply: MessageReply = {
  text: 'Let me look that up.',
  toolUses: [
    { id: 'toolu_01paris', name: 'get_weather', input: { location: 'Paris, FR' } },
    { id: 'toolu_02lyon', name: 'get_weather', input: { location: 'Lyon, FR' } },
  ],
  chunkSize: 4,
};

async function collect(iter: AsyncIterable<ChatCompletionChunk>) {
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const c of iter) chunks.push(c);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks, error: undefined };
}


/** What an OpenAI client would assemble from the chunks. */
async function assemble(chunks: ChatCompletionChunk[]) {
  const body = new Response(chunks.map((c) => JSON.stringify(c) + '\n').join('')).body!;
  return ChatCompletionStream.fromReadableStream(body).finalChatCompletion();
}

describe('anthropic adapter over a socket', () => {
  it('sends a converted request with Anthropic headers, and answers a text turn in OpenAI shape', async () => {
    server.enqueue({ text: 'It is sunny.', model: 'claude-sonnet-4-20250514-served' });
    const { response, headers } = await adapter.chat(
      { model: 'smart', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather?' }], temperature: 0.3 },
      ctx(),
    );
    expect(response).toMatchObject({
      object: 'chat.completion',
      created: Math.floor(clock.now() / 1000),
      model: 'claude-sonnet-4-20250514-served',
      choices: [{ index: 0, message: { role: 'assistant', content: 'It is sunny.' }, finish_reason: 'stop' }],
    });
    expect(response.id).toMatch(/^msg_loopback_/);
    expect(response.usage!.total_tokens).toBe(response.usage!.prompt_tokens + response.usage!.completion_tokens);
    expect(response.usage!.prompt_tokens).toBeGreaterThan(0);
    // Rate-limit headers reach the limits module untouched.
    expect(headers['anthropic-ratelimit-requests-remaining']).toBe('999');

    const rec = server.requests[0]!;
    expect(rec.path).toBe('/v1/messages');
    expect(rec.headers['x-api-key']).toBe(KEY);
    expect(rec.headers['anthropic-version']).toBe('2023-06-01');
    expect(rec.headers.authorization).toBeUndefined();
    expect(rec.body).toEqual({
      model: MODEL,
      max_tokens: 4096,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Weather?' }],
      temperature: 0.3,
    });
  });

  it('buffered and streamed tool calls give the same content, tool_calls, finish_reason and usage', async () => {
    server.enqueue(toolReply, toolReply);
    const buffered = (await adapter.chat(weatherRequest, ctx())).response;
    const stream = await adapter.chatStream(weatherRequest, ctx());
    const { chunks, error } = await collect(stream);
    expect(error).toBeUndefined();
    expect(stream.malformed).toBe(0);
    expect(server.requests[1]!.body).toMatchObject({ stream: true });
    expect(server.requests[1]!.headers.accept).toBe('text/event-stream');

    expect(buffered.choices[0]).toMatchObject({
      message: {
        content: 'Let me look that up.',
        tool_calls: [
          { id: 'toolu_01paris', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, FR"}' } },
          { id: 'toolu_02lyon', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Lyon, FR"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    });

    // OpenAI stream order: role first, one finish chunk, usage last with no choices.
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0]!.finish_reason)).toEqual(['tool_calls']);
    expect(chunks.at(-1)!.choices).toEqual([]);
    const toolStarts = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).filter((t) => t.id);
    expect(toolStarts).toEqual([
      { index: 0, id: 'toolu_01paris', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, id: 'toolu_02lyon', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ]);

    const streamed = await assemble(chunks);
    expect(streamed.model).toBe(buffered.model);
    expect(streamed.choices[0]!.message.content).toBe(buffered.choices[0]!.message.content);
    expect(streamed.choices[0]!.message.tool_calls).toEqual(buffered.choices[0]!.message.tool_calls);
    expect(streamed.choices[0]!.finish_reason).toBe(buffered.choices[0]!.finish_reason);
    expect(streamed.usage).toEqual(buffered.usage);
  });

  it('buffered and streamed answers carry the fields OpenAI always sends, as null (typed clients require them)', async () => {
    server.enqueue(toolReply, toolReply);
    const buffered = (await adapter.chat(weatherRequest, ctx())).response;
    const chunks = (await collect(await adapter.chatStream(weatherRequest, ctx()))).chunks;
    expectOpenAINullFields(buffered, chunks);
  });

  it('continues a final assistant prefill without repeating the whitespace the client already has', async () => {
    const req: ChatRequest = {
      model: 'smart',
      messages: [
        { role: 'user', content: 'Say hello world.' },
        { role: 'assistant', content: 'Hello ' },
      ],
    };
    server.enqueue({ text: ' world!', chunkSize: 1 }, { text: ' world!' });
    const { chunks } = await collect(await adapter.chatStream(req, ctx()));
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('world!');
    const { response } = await adapter.chat(req, ctx());
    expect(response.choices[0]!.message.content).toBe('world!');
    // The loopback server, like the API, rejects a prefill ending in whitespace: it was trimmed.
    expect((server.requests[0]!.body!.messages as unknown[]).at(-1)).toEqual({ role: 'assistant', content: 'Hello' });
  });

  it('maps error statuses to categories, keeping status, provider code and retry-after', async () => {
    server.enqueue(
      { kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' },
      { kind: 'error', status: 429, type: 'rate_limit_error', message: 'Rate limited', headers: { 'retry-after': '7' } },
      { kind: 'error', status: 413, type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' },
      { kind: 'error', status: 400, type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
    );
    const fail = (stream: boolean) =>
      (stream ? adapter.chatStream(weatherRequest, ctx()) : adapter.chat(weatherRequest, ctx())).then(
        () => expect.unreachable(),
        (e: unknown) => e as UpstreamError,
      );
    const overloaded = await fail(false);
    expect(overloaded).toBeInstanceOf(UpstreamError);
    expect(overloaded).toMatchObject({ category: 'overloaded', status: 529, providerCode: 'overloaded_error' });
    // Streams fail the same way before their first chunk.
    expect(await fail(true)).toMatchObject({ category: 'rate_limited', status: 429, retryAfterMs: 7000 });
    expect(await fail(false)).toMatchObject({ category: 'invalid_request', status: 413 });
    expect(await fail(true)).toMatchObject({ category: 'context_length', status: 400 });
  });

  it('a wrong key is an auth failure', async () => {
    const stranger = createAnthropicAdapter(provider({ apiKey: 'sk-ant-wrong' }), { clock, random: () => 0 });
    try {
      await expect(adapter.chat(weatherRequest, ctx())).resolves.toBeDefined();
      await expect(stranger.chat(weatherRequest, ctx())).rejects.toMatchObject({ category: 'auth', status: 401 });
    } finally {
      await stranger.close();
    }
  });

  it('a stream cut before message_stop, cleanly or by a dropped connection, is a network failure after the chunks it had', async () => {
    for (const cutMode of ['end', 'destroy'] as const) {
      server.enqueue({ text: 'A long story that gets cut', chunkSize: 4, cutAfterEvents: 5, cutMode });
      const { chunks, error } = await collect(await adapter.chatStream(weatherRequest, ctx()));
      expect(error, cutMode).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).category, cutMode).toBe('network');
      // message_start, block start, ping, two text deltas.
      expect(chunks.map((c) => c.choices[0]?.delta.content).join(''), cutMode).toBe('A long s');
    }
  });

  it('an error event mid-stream throws the classified error after the text before it', async () => {
    server.enqueue({ text: 'Once upon a time', chunkSize: 5, errorAfterEvents: { after: 4, type: 'overloaded_error', message: 'Overloaded' } });
    const { chunks, error } = await collect(await adapter.chatStream(weatherRequest, ctx()));
    expect(chunks.map((c) => c.choices[0]?.delta.content).join('')).toBe('Once ');
    expect(error).toMatchObject({ category: 'overloaded', providerCode: 'overloaded_error' });
  });

  it('a dropped connection on a buffered call is a network failure', async () => {
    server.enqueue({ dropConnection: true });
    await expect(adapter.chat(weatherRequest, ctx())).rejects.toMatchObject({ category: 'network' });
  });

  it('an aborted attempt rejects with the abort reason', async () => {
    const hanging = await startAnthropicServer(() => new Promise(() => {}));
    const a = createAnthropicAdapter(provider({ baseUrl: hanging.url, apiKey: undefined }), { clock, random: () => 0 });
    try {
      const ac = new AbortController();
      const reason = new UpstreamError({ category: 'timeout', message: 'attempt timed out' });
      const pending = a.chat(weatherRequest, ctx(ac.signal));
      while (hanging.requests.length === 0) await new Promise((r) => setImmediate(r));
      ac.abort(reason);
      await expect(pending).rejects.toBe(reason);
      // No key configured: no x-api-key header at all.
      expect(hanging.requests[0]!.headers['x-api-key']).toBeUndefined();
    } finally {
      await a.close();
      await hanging.close();
    }
  });

  it('leaves temperature and top_p out when the provider pins API version 2026-10-21', async () => {
    const v2 = createAnthropicAdapter(provider({ headers: { 'Anthropic-Version': '2026-10-21' } }), { clock, random: () => 0 });
    try {
      const { response } = await v2.chat({ ...weatherRequest, temperature: 0.2, top_p: 0.5 }, ctx());
      expect(response.choices[0]!.finish_reason).toBe('stop');
      expect(server.requests[0]!.headers['anthropic-version']).toBe('2026-10-21');
      expect(server.requests[0]!.body).not.toHaveProperty('temperature');
      expect(server.requests[0]!.body).not.toHaveProperty('top_p');
    } finally {
      await v2.close();
    }
  });

  it('has no embeddings', () => {
    expect(adapter.embeddings).toBeUndefined();
  });
});
