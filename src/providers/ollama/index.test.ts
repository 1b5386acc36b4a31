/**
 * The Ollama adapter over a real socket, against the loopback Ollama server
 * (whose wire format the official SDK vouches for): buffered, streamed and
 * tool-calling answers come out as the same OpenAI shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import type { ProviderConfig } from '../../config/types.js';
import type { AttemptContext, ProviderAdapter } from '../types.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { askBothWays } from '../../../test/helpers/ask-both-ways.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';
import { startOllamaServer, type OllamaServer } from '../../../test/servers/ollama-server.js';
import { createOllamaAdapter } from './index.js';
import { expectOpenAINullFields } from '../../../test/helpers/openai-null-fields.js';
import { toolCallChoice } from '../../../test/helpers/tool-call-choice.js';

const MODEL = 'llama3.2';
const clock = new VirtualClock(Date.UTC(2026, 0, 1));
const CREATED = Math.floor(clock.now() / 1000);
let server: OllamaServer;
let adapter: ProviderAdapter;

const ctx = (model = MODEL): AttemptContext => ({ signal: new AbortController().signal, model, requestId: 'req-7' });
const ask = (content: ChatRequest['messages'][number]['content'], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'alias',
  messages: [{ role: 'user', content }],
  ...extra,
});
const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

beforeAll(async () => {
  server = await startOllamaServer({ models: [MODEL, 'llava', 'all-minilm'] });
  const provider: ProviderConfig = { id: 'local', type: 'ollama', baseUrl: server.url, locality: 'local', headers: {}, maxConnections: 2 };
  let r = 0;
  // A deterministic random source: minted tool-call ids are stable across runs.
  adapter = createOllamaAdapter(provider, { clock, random: () => ((r = (r + 0.37) % 1), r) });
});
afterAll(async () => {
  await adapter.close();
  await server.close();
});

describe('ollama adapter over a loopback socket', () => {
  it('buffered text: an OpenAI chat completion from a stream:false request with options', async () => {
    server.enqueue({ kind: 'message', text: 'The sky is blue.', promptEvalCount: 26, evalCount: 5 });
    const { response } = await adapter.chat(ask('why is the sky blue?', { temperature: 0, max_tokens: 64, seed: 1 }), ctx());
    expect(response).toEqual({
      id: 'chatcmpl-req-7',
      object: 'chat.completion',
      created: CREATED,
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: 'The sky is blue.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 26, completion_tokens: 5, total_tokens: 31 },
      system_fingerprint: null,
    });
    const req = server.requests.at(-1)!;
    expect(req.path).toBe('/api/chat');
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body).toEqual({
      model: MODEL,
      messages: [{ role: 'user', content: 'why is the sky blue?' }],
      stream: false,
      options: { temperature: 0, num_predict: 64, seed: 1 },
    });
  });

  it('streamed text: role chunk first, the same content, finish_reason and usage as buffered', async () => {
    const reply = { kind: 'message' as const, text: 'Rayleigh scattering, mostly.', thinking: 'short answer' };
    server.enqueue(reply, reply);
    const { buffered, out, chunks, malformed } = await askBothWays(adapter, ask('why?'), ctx());
    expect(server.requests.at(-1)!.body).toMatchObject({ stream: true });
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(out).toEqual({ content: buffered.choices[0]!.message.content, finish_reason: 'stop', usage: buffered.usage });
    expect(malformed).toBe(0);
  });

  it('tool call, buffered and streamed: the same tool_calls (JSON text arguments), finish_reason and usage', async () => {
    const reply = { kind: 'message' as const, toolCalls: [{ id: 'call_srv1', name: 'get_weather', arguments: { city: 'Paris' } }] };
    server.enqueue(reply, reply);
    const { buffered, out } = await askBothWays(adapter, ask('Weather in Paris?', { tools }), ctx());
    expect(buffered.choices[0]).toEqual(toolCallChoice([{ id: 'call_srv1', name: 'get_weather', arguments: '{"city":"Paris"}' }]));
    // The buffered request: the streamed one came after it.
    expect(server.requests.at(-2)!.body).toMatchObject({ tools });
    expect(out).toEqual({ content: null, tool_calls: buffered.choices[0]!.message.tool_calls, finish_reason: 'tool_calls', usage: buffered.usage });
  });

  it('buffered and streamed answers carry the fields OpenAI always sends, as null (typed clients require them)', async () => {
    const reply = { kind: 'message' as const, text: 'Checking.', toolCalls: [{ id: 'call_srv2', name: 'get_weather', arguments: { city: 'Oslo' } }] };
    server.enqueue(reply, reply);
    const { buffered, chunks } = await askBothWays(adapter, ask('Weather in Oslo?', { tools }), ctx());
    expectOpenAINullFields(buffered, chunks);
  });

  it('mints an OpenAI-style id for a tool call that arrives without one', async () => {
    server.enqueue({ kind: 'message', toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const { response } = await adapter.chat(ask('Weather in Oslo?', { tools }), ctx());
    expect(response.choices[0]!.message.tool_calls![0]!.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
  });

  it('sends data-URL images as bare base64, and refuses http image URLs without calling Ollama', async () => {
    server.enqueue({ kind: 'message', text: 'A cat.' });
    await adapter.chat(
      ask([
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQSkZJRg==' } },
      ]),
      ctx('llava'),
    );
    expect(server.requests.at(-1)!.body).toMatchObject({ messages: [{ role: 'user', content: 'what is this?', images: ['/9j/4AAQSkZJRg=='] }] });

    const before = server.requests.length;
    const err = await adapter.chat(ask([{ type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } }]), ctx('llava')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ category: 'invalid_request' });
    expect((err as Error).message).toMatch(/does not fetch image URLs/);
    expect(server.requests.length).toBe(before);
  });

  it('maps errors: unknown model 404 → not_found, busy 503 → overloaded', async () => {
    const e404 = await adapter.chat(ask('hi'), ctx('llama3.3')).catch((e: unknown) => e);
    expect(e404).toMatchObject({ category: 'not_found', status: 404, message: 'model "llama3.3" not found, try pulling it first' });
    server.enqueue({ kind: 'error', status: 503, error: 'server busy, please try again.  maximum pending requests exceeded' });
    const e503 = await adapter.chatStream(ask('hi'), ctx()).catch((e: unknown) => e);
    expect(e503).toMatchObject({ category: 'overloaded', status: 503 });
  });

  it('a stream cut before done fails with a network error after the chunks that came', async () => {
    server.enqueue({ kind: 'message', text: 'one two three', cutAfter: 2 });
    const stream = await adapter.chatStream(ask('count'), ctx());
    const seen: (string | null | undefined)[] = [];
    const err = await (async () => {
      for await (const c of stream) seen.push(c.choices[0]?.delta.content);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(['', 'one ', 'two ']);
    expect(err).toMatchObject({ category: 'network' });
  });

  it('a mid-stream error line fails the stream with the server error', async () => {
    server.enqueue({
      kind: 'raw',
      body: '{"model":"llama3.2","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}\n{"error":"an error was encountered while running the model: unexpected EOF"}\n',
    });
    const stream = await adapter.chatStream(ask('hi'), ctx());
    const err = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ category: 'server', message: 'an error was encountered while running the model: unexpected EOF' });
  });

  it('embeddings: /api/embed answered in the OpenAI list shape', async () => {
    server.enqueue({ kind: 'embed', vectors: [[0.25, -0.5]], promptEvalCount: 4 });
    const { response } = await adapter.embeddings!({ model: 'e', input: 'hello' }, ctx('all-minilm'));
    expect(response).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5] }],
      model: 'all-minilm',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    expect(server.requests.at(-1)!.body).toEqual({ model: 'all-minilm', input: 'hello' });
  });
});
