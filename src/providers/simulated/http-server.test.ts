import { afterEach, describe, expect, it } from 'vitest';
import OpenAI, { APIConnectionError, APIUserAbortError, InternalServerError, RateLimitError } from 'openai';
import { startFaultServer, type FaultServer, type FaultServerOptions } from './http-server.js';
import { simulateReply } from './reply.js';
import { unitVector } from './embeddings.js';
import { createOpenAIAdapter } from '../openai/index.js';
import type { ProviderAdapter } from '../types.js';
import type { ChatCompletionChunk, ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { systemClock, systemRandom } from '../../core/clock.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';

const servers: FaultServer[] = [];
const adapters: ProviderAdapter[] = [];
afterEach(async () => {
  await Promise.all(adapters.splice(0).map((a) => a.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(opts: FaultServerOptions = {}): Promise<FaultServer> {
  const s = await startFaultServer({ providerId: 'fault', ...opts });
  servers.push(s);
  return s;
}

function sdk(s: FaultServer): OpenAI {
  return new OpenAI({ baseURL: s.url, apiKey: 'sk-test-not-secret', maxRetries: 0 });
}

const messages = [{ role: 'user' as const, content: 'Say hello.' }];
const expected = (model: string): string =>
  simulateReply({ model, messages }, { provider: 'fault', model }).choices[0]!.pieces.join('');

describe('fault server, driven by the official openai SDK', () => {
  it('answers a buffered chat completion and records the request', async () => {
    const s = await serve();
    const res = await sdk(s).chat.completions.create({ model: 'gpt-test', messages });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-test');
    expect(res.choices[0]!.message.content).toBe(expected('gpt-test'));
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: { model: 'gpt-test', messages } });
    expect(s.requests[0]!.headers.authorization).toBe('Bearer sk-test-not-secret');
  });

  it('streams SSE with a usage chunk only when include_usage is asked', async () => {
    const s = await serve({ model: 'served-model' });
    const chunks: ChatCompletionChunk[] = [];
    const stream = await sdk(s).chat.completions.create({ model: 'alias', messages, stream: true, stream_options: { include_usage: true } });
    for await (const c of stream) chunks.push(c as unknown as ChatCompletionChunk);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completion_tokens).toBe(chunks.length - 3);
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.model === 'served-model')).toBe(true);
    expect(chunks[chunks.length - 2]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(expected('served-model'));

    const plain: ChatCompletionChunk[] = [];
    for await (const c of await sdk(s).chat.completions.create({ model: 'alias', messages, stream: true })) {
      plain.push(c as unknown as ChatCompletionChunk);
    }
    expect(plain.some((c) => 'usage' in c)).toBe(false);
    expect(plain[plain.length - 1]!.choices[0]!.finish_reason).toBe('stop');
  });

  it('answers n choices, buffered and streamed side by side, as the SDK reads OpenAI’s', async () => {
    const s = await serve();
    const res = await sdk(s).chat.completions.create({ model: 'm', messages, n: 2 });
    expect(res.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(res.choices[1]!.message.content).toContain('(choice 1)');

    const text = ['', ''];
    const finished: number[] = [];
    const chunks = await sdk(s).chat.completions.create({ model: 'm', messages, n: 2, stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const c of chunks) {
      usage = c.usage ?? usage;
      for (const ch of c.choices) {
        text[ch.index] += ch.delta.content ?? '';
        if (ch.finish_reason) finished.push(ch.index);
      }
    }
    expect(text).toEqual(res.choices.map((c) => c.message.content));
    expect(finished).toEqual([0, 1]);
    expect(usage).toEqual(res.usage);
  });

  it('429 → RateLimitError with the Retry-After header and OpenAI’s error body', async () => {
    const s = await serve({ simulate: { faults: [{ kind: 'rate_limit', probability: 1, retryAfterS: 3 }] } });
    const err = await sdk(s).chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    const e = err as RateLimitError;
    expect(e.status).toBe(429);
    expect(e.headers?.get('retry-after')).toBe('3');
    expect(e.code).toBe('rate_limit_exceeded');
    expect(e.type).toBe('requests');
  });

  it('a status fault reaches the SDK as that status (529 overloaded)', async () => {
    const s = await serve({ simulate: { faults: [{ kind: 'status', probability: 1, status: 529 }] } });
    const err = await sdk(s).chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InternalServerError);
    expect((err as InternalServerError).status).toBe(529);
    expect((err as InternalServerError).type).toBe('overloaded_error');
  });

  it('reset → APIConnectionError', async () => {
    const s = await serve({ simulate: { faults: [{ kind: 'reset', probability: 1 }] } });
    const err = await sdk(s).chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIConnectionError);
  });

  it('stream_abort → the SDK stream throws after N content chunks', async () => {
    const s = await serve();
    s.script.enqueue({ kind: 'stream_abort', afterChunks: 2 });
    const got: string[] = [];
    const stream = await sdk(s).chat.completions.create({ model: 'm', messages, stream: true });
    const err = await (async () => {
      for await (const c of stream) got.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(got).toEqual(['', ...simulateReply({ model: 'm', messages }, { provider: 'fault', model: 'm' }).choices[0]!.pieces.slice(0, 2)]);
  });

  it('serves embeddings (base64 by SDK default) and the model list', async () => {
    const s = await serve({ model: 'emb-model' });
    const client = sdk(s);
    const res = await client.embeddings.create({ model: 'e', input: ['alpha', 'beta'] });
    expect(res.model).toBe('emb-model');
    expect(s.requests[0]!.body).toMatchObject({ encoding_format: 'base64' });
    const want = unitVector('beta', 8);
    res.data[1]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(want[i]!, 6));
    const floats = await client.embeddings.create({ model: 'e', input: 'alpha', encoding_format: 'float', dimensions: 4 });
    expect(floats.data[0]!.embedding).toEqual(unitVector('alpha', 4));

    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['emb-model']);
  });

  it('hang: the client’s abort frees it, and close() ends a request still hanging', async () => {
    const s = await serve({ simulate: { faults: [{ kind: 'hang', probability: 1 }] } });
    const client = sdk(s);
    const ac = new AbortController();
    const aborted = client.chat.completions.create({ model: 'm', messages }, { signal: ac.signal }).catch((e: unknown) => e);
    await until(() => s.requests.length === 1);
    ac.abort();
    expect(await aborted).toBeInstanceOf(APIUserAbortError);

    const stuck = client.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    await until(() => s.requests.length === 2);
    await s.close();
    expect(await stuck).toBeInstanceOf(APIConnectionError);
  });

  it('rejects malformed bodies and unknown routes with OpenAI error bodies', async () => {
    const s = await serve();
    const bad = await fetch(`${s.url}/chat/completions`, { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const missing = await fetch(`${s.url}/chat/completions`, { method: 'POST', body: '{"model":"m"}' });
    expect(missing.status).toBe(400);
    expect((await fetch(`${s.url}/nothing`)).status).toBe(404);
  });

  it('waits through the injected clock', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
    const s = await serve({ clock, simulate: { latencyMs: 600_000 } });
    const start = clock.now();
    const res = await sdk(s).chat.completions.create({ model: 'm', messages });
    expect(res.choices[0]!.message.content).toBe(expected('m'));
    expect(clock.now() - start).toBeGreaterThanOrEqual(600_000);
  });
});

describe('fault server, driven by the project’s OpenAI adapter', () => {
  function openai(s: FaultServer): ProviderAdapter {
    const a = createOpenAIAdapter(
      { id: 'up', type: 'openai', baseUrl: s.url, apiKey: 'sk-test', locality: 'external', headers: {}, maxConnections: 4 },
      { clock: systemClock, random: systemRandom },
    );
    adapters.push(a);
    return a;
  }
  const req: ChatRequest = { model: 'alias', messages };
  const ctx = (signal = new AbortController().signal) => ({ signal, model: 'up-model', requestId: 'r' });

  async function collect(stream: AsyncIterable<ChatCompletionChunk>) {
    const got: ChatCompletionChunk[] = [];
    try {
      for await (const c of stream) got.push(c);
      return { got, error: undefined };
    } catch (error) {
      return { got, error };
    }
  }

  it('buffered and streamed replies arrive whole, usage included', async () => {
    const s = await serve();
    const a = openai(s);
    const res = await a.chat(req, ctx());
    expect(res.response.choices[0]!.message.content).toBe(expected('up-model'));
    const { got, error } = await collect(await a.chatStream(req, ctx()));
    expect(error).toBeUndefined();
    expect(got.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(expected('up-model'));
    expect(got[got.length - 1]!.usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('stream_abort → the stream throws network after the delivered chunks', async () => {
    const s = await serve();
    s.script.enqueue({ kind: 'stream_abort', afterChunks: 3 });
    const { got, error } = await collect(await openai(s).chatStream(req, ctx()));
    expect(got).toHaveLength(4);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).category).toBe('network');
  });

  it('classifies 429, 529, 503, reset and hang like the in-process adapter', async () => {
    const s = await serve();
    const a = openai(s);
    const fail = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as UpstreamError);

    s.script.enqueue({ kind: 'rate_limit', retryAfterS: 5 });
    const rl = (await fail(a.chat(req, ctx())))!;
    expect([rl.status, rl.category, rl.retryAfterMs]).toEqual([429, 'rate_limited', 5000]);

    s.script.enqueue({ kind: 'status', status: 529 });
    expect((await fail(a.chatStream(req, ctx())))!.category).toBe('overloaded');
    s.script.enqueue({ kind: 'status', status: 503 });
    expect((await fail(a.chat(req, ctx())))!.label).toBe('503 server');

    s.script.enqueue({ kind: 'reset' });
    expect((await fail(a.chat(req, ctx())))!.category).toBe('network');

    s.script.enqueue({ kind: 'hang' });
    const ac = new AbortController();
    const hung = fail(a.chat(req, ctx(ac.signal)));
    await until(() => s.requests.length === 5);
    const reason = new Error('attempt timeout');
    ac.abort(reason);
    expect(await hung).toBe(reason);
  });
});

/** Poll a condition on the event loop (for "the server has received it"), bounded. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  expect(cond()).toBe(true);
}
