/**
 * The adapter over a real socket, against the loopback Gemini server (which
 * the @google/genai SDK accepts as faithful): buffered, streamed, function
 * calls, errors, cuts and embeddings, asserted in OpenAI shapes.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../config/types.js';
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChatRequest, ToolCall, Usage } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';
import { startGeminiServer, type GeminiReply, type GeminiServer } from '../../../test/servers/gemini-server.js';
import type { AttemptContext, ProviderAdapter } from '../types.js';
import { seededRandom } from '../../core/clock.js';
import { createGeminiAdapter, modelPath } from './index.js';
import type { GenerateContentRequest } from './wire.js';
import { expectOpenAINullFields } from '../../../test/helpers/openai-null-fields.js';

const KEY = 'AIzaTestKey-not-real';
let server: GeminiServer;
let adapter: ProviderAdapter;
const clock = new VirtualClock(Date.UTC(2026, 0, 1));

function provider(baseUrl: string, extra: Partial<ProviderConfig> = {}): ProviderConfig {
  return { id: 'gem', type: 'gemini', baseUrl, apiKey: KEY, locality: 'external', headers: {}, maxConnections: 4, ...extra };
}
const ctx = (model = 'gemini-2.5-flash'): AttemptContext => ({ signal: new AbortController().signal, model, requestId: 'req-42' });
const chat = (messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'alias', messages, ...extra });

beforeAll(async () => {
  server = await startGeminiServer({ apiKey: KEY });
  adapter = createGeminiAdapter(provider(server.url), { clock, random: seededRandom(7) });
});
afterAll(async () => {
  await adapter.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

interface Assembled {
  model: string;
  content: string | null;
  tool_calls: ToolCall[] | undefined;
  finish_reason: string | null;
  usage: Usage | undefined;
}

/** What a client rebuilds from chunks, to compare with the buffered answer. */
function assemble(chunks: ChatCompletionChunk[]): Assembled {
  let content = '';
  const calls: ToolCall[] = [];
  let finish: string | null = null;
  let usage: Usage | undefined;
  for (const c of chunks) {
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      if (ch.delta.content) content += ch.delta.content;
      for (const t of ch.delta.tool_calls ?? []) {
        calls[t.index] = { id: t.id!, type: 'function', function: { name: t.function!.name!, arguments: t.function!.arguments! } };
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  return { model: chunks[0]!.model, content: content || (calls.length ? null : ''), tool_calls: calls.length ? calls : undefined, finish_reason: finish, usage };
}
function fromBuffered(res: ChatCompletion): Assembled {
  const ch = res.choices[0]!;
  const tool_calls = ch.message.tool_calls?.map((t) => ({ id: t.id, type: t.type, function: t.function }));
  return { model: res.model, content: ch.message.content, tool_calls, finish_reason: ch.finish_reason, usage: res.usage };
}
async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}
async function rejection(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

describe('gemini adapter over loopback', () => {
  it('buffered: converts the request, sends the key only in x-goog-api-key, returns a ChatCompletion', async () => {
    server.enqueue({ kind: 'text', text: 'Bonjour!', usage: { promptTokenCount: 11, candidatesTokenCount: 3, thoughtsTokenCount: 4 } });
    const { response } = await adapter.chat(
      chat([{ role: 'system', content: 'Be French.' }, { role: 'user', content: 'Hello' }], { temperature: 0.1, max_tokens: 20 }),
      ctx(),
    );
    expect(response).toEqual({
      id: 'chatcmpl-resp-1',
      object: 'chat.completion',
      created: Math.floor(Date.UTC(2026, 0, 1) / 1000),
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Bonjour!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, completion_tokens_details: { reasoning_tokens: 4 } },
      system_fingerprint: null,
    });
    const seen = server.requests[0]!;
    expect(seen.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(seen.headers['x-goog-api-key']).toBe(KEY);
    expect(seen.url).not.toContain(KEY);
    expect(seen.body).toEqual({
      systemInstruction: { parts: [{ text: 'Be French.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      generationConfig: { temperature: 0.1, maxOutputTokens: 20 },
    });
  });

  it('every request fixture is accepted by the faithful server and sent exactly as the fixture says', async () => {
    for (const name of ['request-text.json', 'request-system.json', 'request-multi-turn.json', 'request-image.json', 'request-tools.json', 'request-json-schema.json']) {
      const { openai, gemini } = JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as {
        openai: ChatRequest;
        gemini: GenerateContentRequest;
      };
      const { response } = await adapter.chat(openai, ctx());
      expect(response.choices[0]!.finish_reason, name).toBe('stop');
      expect(server.requests.at(-1)!.body, name).toEqual(gemini);
    }
  });

  for (const [label, reply] of [
    ['text', { kind: 'text', text: ['The answer ', 'is ', '42.'], usage: { promptTokenCount: 5, candidatesTokenCount: 6 } }],
    ['function call', { kind: 'function_call', text: 'Let me look. ', calls: [{ name: 'get_weather', args: { city: 'Oslo' } }, { name: 'get_time', args: { tz: 'CET' } }] }],
  ] as [string, GeminiReply][]) {
    it(`streamed and buffered agree (${label}): content, tool_calls, finish_reason, usage`, async () => {
      const tools: ChatRequest['tools'] = [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } } },
      ];
      const req = chat([{ role: 'user', content: 'Question?' }], { tools });
      server.enqueue(reply, reply);
      const buffered = fromBuffered((await adapter.chat(req, ctx())).response);
      const stream = await adapter.chatStream({ ...req, stream: true }, ctx());
      const chunks = await collect(stream);
      expect(stream.malformed).toBe(0);
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
      expect(chunks.at(-1)!.choices).toEqual([]);
      // The same answer both ways, but for the tool calls' ids: each call gets a new one, as OpenAI's do.
      const ids = (a: typeof buffered) => a.tool_calls?.map((t) => t.id) ?? [];
      const withoutIds = (a: typeof buffered) => ({ ...a, tool_calls: a.tool_calls?.map(({ id: _id, ...rest }) => rest) });
      expect(withoutIds(assemble(chunks))).toEqual(withoutIds(buffered));
      const all = [...ids(buffered), ...ids(assemble(chunks))];
      for (const id of all) expect(id).toMatch(/^call_[A-Za-z0-9]{24}$/);
      expect(new Set(all).size).toBe(all.length);
      expect(server.requests[1]!.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
      expect(server.requests[1]!.headers.accept).toBe('text/event-stream');
      if (label === 'function call') {
        expect(buffered.finish_reason).toBe('tool_calls');
        expect(buffered.content).toBe('Let me look. ');
        expect(withoutIds(buffered).tool_calls).toEqual([
          { type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
          { type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
        ]);
        expect(all).toHaveLength(4);
      } else {
        expect(buffered).toMatchObject({ content: 'The answer is 42.', finish_reason: 'stop', usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } });
      }
    });
  }

  it('buffered and streamed answers carry the fields OpenAI always sends, as null (typed clients require them)', async () => {
    const reply: GeminiReply = { kind: 'function_call', text: 'Let me look. ', calls: [{ name: 'get_weather', args: { city: 'Oslo' } }] };
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const req = chat([{ role: 'user', content: 'Weather in Oslo?' }], { tools });
    server.enqueue(reply, reply);
    const buffered = (await adapter.chat(req, ctx())).response;
    const chunks = await collect(await adapter.chatStream({ ...req, stream: true }, ctx()));
    expectOpenAINullFields(buffered, chunks);
  });

  it('a tool-call round trip: the echoed assistant message carries the thought signature Gemini 3 demands', async () => {
    const strict = await startGeminiServer({ apiKey: KEY, requireThoughtSignatures: true });
    const a = createGeminiAdapter(provider(strict.url), { clock, random: () => 0.5 });
    try {
      strict.enqueue({ kind: 'function_call', calls: [{ name: 'lookup', args: { q: 'x' }, thoughtSignature: 'c2lnbmF0dXJl' }] });
      const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
      const first = await a.chat(chat([{ role: 'user', content: 'find x' }], { tools }), ctx('gemini-3-pro-preview'));
      const assistant = first.response.choices[0]!.message;
      const call = assistant.tool_calls![0]!;
      const followUp = chat([{ role: 'user', content: 'find x' }, { ...assistant }, { role: 'tool', tool_call_id: call.id, content: '{"found":true}' }], { tools });
      strict.enqueue({ kind: 'text', text: 'Found it.' });
      const second = await a.chat(followUp, ctx('gemini-3-pro-preview'));
      expect(second.response.choices[0]!.message.content).toBe('Found it.');
      expect(strict.requests[1]!.body.contents).toEqual([
        { role: 'user', parts: [{ text: 'find x' }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'x' } }, thoughtSignature: 'c2lnbmF0dXJl' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { found: true } } }] },
      ]);
    } finally {
      await a.close();
      await strict.close();
    }
  });

  it('maps Gemini error statuses to UpstreamError categories (buffered and before a stream starts)', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      body: {
        error: {
          code: 429,
          message: 'You exceeded your current quota.',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }],
        },
      },
    });
    expect(await rejection(adapter.chat(chat([{ role: 'user', content: 'x' }]), ctx()))).toMatchObject({
      category: 'rate_limited',
      status: 429,
      retryAfterMs: 30_000,
      providerCode: 'RESOURCE_EXHAUSTED',
    });
    server.enqueue({ kind: 'error', status: 503, body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } });
    expect(await rejection(adapter.chatStream(chat([{ role: 'user', content: 'x' }]), ctx()))).toMatchObject({ category: 'overloaded', status: 503 });

    const wrongKey = createGeminiAdapter(provider(server.url, { apiKey: 'wrong' }), { clock, random: () => 0.5 });
    try {
      const err = await rejection(wrongKey.chat(chat([{ role: 'user', content: 'x' }]), ctx()));
      expect(err).toMatchObject({ category: 'auth', status: 400 });
      expect(err.message).not.toContain('wrong');
    } finally {
      await wrongKey.close();
    }
  });

  it('a stream cut mid-way throws network after the chunks that arrived', async () => {
    server.enqueue({ kind: 'cut', text: ['Half ', 'an answer'] });
    const stream = await adapter.chatStream(chat([{ role: 'user', content: 'x' }]), ctx());
    const got: string[] = [];
    const err = await (async () => {
      for await (const c of stream) if (c.choices[0]?.delta.content) got.push(c.choices[0].delta.content);
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(got).toEqual(['Half ', 'an answer']);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).category).toBe('network');
  });

  it('a stream that closes cleanly without a finishReason, or fails in-band, is not a finished answer', async () => {
    const partial = { candidates: [{ content: { role: 'model', parts: [{ text: 'so far' }] }, index: 0 }] };
    server.enqueue({ kind: 'raw', events: [partial] });
    const closed = await adapter.chatStream(chat([{ role: 'user', content: 'x' }]), ctx());
    expect((await rejection(collect(closed))).category).toBe('network');

    server.enqueue({ kind: 'raw', events: [partial, { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } }] });
    const failed = await adapter.chatStream(chat([{ role: 'user', content: 'x' }]), ctx());
    expect((await rejection(collect(failed))).category).toBe('server');
  });

  it('candidates ended without content by a MALFORMED_FUNCTION_CALL are a server failure, buffered and before a stream commits', async () => {
    // One reply queued per call: a failing expectation leaves none behind for the tests after it.
    const malformed: GeminiReply = { kind: 'no_content', finishReason: 'MALFORMED_FUNCTION_CALL' };
    const req = chat([{ role: 'user', content: 'x' }]);
    server.enqueue(malformed);
    expect(await rejection(adapter.chat(req, ctx()))).toMatchObject({ category: 'server', providerCode: 'MALFORMED_FUNCTION_CALL' });
    server.enqueue(malformed);
    expect(await rejection(adapter.chat({ ...req, n: 2 }, ctx()))).toMatchObject({ category: 'server' });
    expect(server.requests[1]!.body.generationConfig).toEqual({ candidateCount: 2 });
    server.enqueue(malformed);
    const stream = await adapter.chatStream({ ...req, stream: true }, ctx());
    const got: ChatCompletionChunk[] = [];
    const err = await (async () => {
      for await (const c of stream) got.push(c);
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ category: 'server', providerCode: 'MALFORMED_FUNCTION_CALL' });
    expect(got.flatMap((c) => c.choices.filter((ch) => ch.finish_reason || ch.delta.content))).toEqual([]);
  });

  it('a blocked prompt with n = 3, buffered: three choices, each empty and content_filter', async () => {
    server.enqueue({ kind: 'raw', response: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 }, modelVersion: 'gemini-2.5-flash' } });
    const { response } = await adapter.chat(chat([{ role: 'user', content: 'x' }], { n: 3 }), ctx());
    expect(response.choices).toEqual([0, 1, 2].map((index) => ({ index, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' })));
    expect(server.requests[0]!.body.generationConfig).toEqual({ candidateCount: 3 });
  });

  it('a buffered call whose socket is cut is a network error', async () => {
    server.enqueue({ kind: 'cut', text: [] });
    expect((await rejection(adapter.chat(chat([{ role: 'user', content: 'x' }]), ctx()))).category).toBe('network');
  });

  it('a conversion the request cannot survive fails as invalid_request without calling upstream', async () => {
    const err = await rejection(adapter.chat(chat([{ role: 'tool', tool_call_id: 'missing', content: 'x' }]), ctx()));
    expect(err.category).toBe('invalid_request');
    expect(server.requests).toHaveLength(0);
  });

  it('the model only ever fills one encoded path segment', async () => {
    const model = 'evil/../../v1beta/files:generateContent?key=x#frag';
    server.enqueue({ kind: 'text', text: 'ok' });
    const { response } = await adapter.chat(chat([{ role: 'user', content: 'x' }]), ctx(model));
    expect(response.choices[0]!.message.content).toBe('ok');
    const seen = server.requests[0]!;
    expect(seen.url).toBe(`/v1beta/models/${encodeURIComponent(model)}:generateContent`);
    expect(seen.model).toBe(model);
    expect(seen.action).toBe('generateContent');
    expect(modelPath('models/gemini-2.5-pro')).toBe('/models/gemini-2.5-pro');
    expect(modelPath('tunedModels/my-model')).toBe('/tunedModels/my-model');
  });

  it('a base URL that already names the API version is not given a second one', async () => {
    const versioned = createGeminiAdapter(provider(`${server.url}/v1beta/`), { clock, random: () => 0.5 });
    try {
      server.enqueue({ kind: 'text', text: 'ok' });
      await versioned.chat(chat([{ role: 'user', content: 'x' }]), ctx());
      expect(server.requests[0]!.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    } finally {
      await versioned.close();
    }
  });

  it('embeddings: one batchEmbedContents call, OpenAI list back', async () => {
    const res = await adapter.embeddings!({ model: 'alias', input: ['alpha', 'beta'], dimensions: 3 }, ctx('text-embedding-004'));
    expect(res.response.object).toBe('list');
    expect(res.response.model).toBe('text-embedding-004');
    expect(res.response.data.map((d) => [d.index, (d.embedding as number[]).length])).toEqual([
      [0, 3],
      [1, 3],
    ]);
    expect(res.response.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    const seen = server.requests[0]!;
    expect(seen.url).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(seen.body).toEqual({
      requests: [
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 3 },
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'beta' }] }, outputDimensionality: 3 },
      ],
    });
  });

  it('embeddings past the 100 a batch holds: several calls, answered as one in input order (found by fuzzing)', async () => {
    const texts = Array.from({ length: 250 }, (_, i) => `text ${i}`);
    const res = await adapter.embeddings!({ model: 'alias', input: texts, dimensions: 2 }, ctx('text-embedding-004'));
    expect(server.requests.map((r) => (r.body as { requests: unknown[] }).requests.length).sort((a, b) => a - b)).toEqual([50, 100, 100]);
    expect(res.response.data.map((d) => d.index)).toEqual(texts.map((_, i) => i));
    // Each vector is the one for its own text: the single-text call gives the same.
    for (const i of [0, 99, 100, 249]) {
      const one = await adapter.embeddings!({ model: 'alias', input: texts[i]!, dimensions: 2 }, ctx('text-embedding-004'));
      expect(res.response.data[i]!.embedding).toEqual(one.response.data[0]!.embedding);
    }
    expect(res.response.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('embeddings in batches: the first failure stops the rest, none sent after it (found by review)', async () => {
    server.enqueue({ kind: 'error', status: 429, body: { error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } } });
    const texts = Array.from({ length: 2000 }, (_, i) => `t${i}`);
    await expect(adapter.embeddings!({ model: 'alias', input: texts }, ctx('text-embedding-004'))).rejects.toMatchObject({ category: 'rate_limited' });
    await new Promise((r) => setTimeout(r, 50));
    // Four calls at a time, at most: the failed one and those already out; never the 20 a fan-out sends.
    expect(server.requests.length).toBeLessThanOrEqual(4);
  });
});
