/**
 * A model that refuses a parameter only it does not take, over real sockets with
 * the official SDK as the client. OpenAI's reasoning models (o1 to gpt-5) refuse
 * `max_tokens` ("Use 'max_completion_tokens' instead") and any `temperature` but
 * 1, with the bodies below. The first is learnt: the same model is asked again at
 * once with `max_completion_tokens`, and is sent that from then on. The second
 * fails over to a model that takes it; only when no candidate does is the refusal
 * the client's answer. A request that is wrong as such still ends the chain.
 */
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, completionText, sseHead, startRawUpstream, usageChunk, type RawHit, type RawUpstream } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

function refuse(res: ServerResponse, message: string, param: string, code: string): void {
  res.writeHead(400, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error', param, code } }));
}

function answer(res: ServerResponse, hit: RawHit, text: string): void {
  const model = String(hit.body.model);
  if (hit.body.stream === true) {
    sseHead(res);
    res.write(chunk(model, { role: 'assistant', content: '' }));
    res.write(chunk(model, { content: text }));
    res.write(chunk(model, {}, 'stop'));
    res.end(`${usageChunk(model, 5, 2)}data: [DONE]\n\n`);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(completionText(model, text, 5, 2));
}

interface Setup {
  gw: TestGateway;
  client: OpenAI;
  reasoning: RawUpstream;
  classic: RawUpstream;
}

async function setup(): Promise<Setup> {
  // One OpenAI-like upstream serving a reasoning model (o3-mini) and an older one (gpt-4.1).
  const reasoning = await startRawUpstream((res, hit) => {
    const b = hit.body;
    if (b.user === 'bad') return refuse(res, "Invalid value: 'robot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", 'messages[0].role', 'invalid_value');
    // An Azure deployment's name is the operator's own: nothing in it says "reasoning model".
    if (String(b.model).startsWith('o3') || b.model === 'prod-reasoner') {
      if (b.max_tokens !== undefined) {
        return refuse(res, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
      }
      if (b.temperature !== undefined && b.temperature !== 1) {
        return refuse(res, `Unsupported value: 'temperature' does not support ${String(b.temperature)} with this model. Only the default (1) value is supported.`, 'temperature', 'unsupported_value');
      }
    }
    answer(res, hit, 'thought it through');
  });
  const classic = await startRawUpstream((res, hit) => answer(res, hit, 'classic answer'));
  closers.push(() => reasoning.close(), () => classic.close());
  const gw = await startGateway({
    resilience: { maxRetries: 0, breaker: { failureThreshold: 1 } },
    providers: [
      { id: 'r', type: 'openai', baseUrl: reasoning.url },
      { id: 'c', type: 'openai', baseUrl: classic.url },
      { id: 'az', type: 'azure', baseUrl: reasoning.url.replace(/\/v1$/, ''), apiKey: '${AZ_KEY}' },
    ],
    models: [
      { name: 'think', deployments: [{ provider: 'r', model: 'o3-mini' }] },
      { name: 'plain', deployments: [{ provider: 'r', model: 'gpt-4.1' }] },
      { name: 'mixed', deployments: [{ provider: 'r', model: 'o3-mini' }], fallbacks: ['classic'] },
      { name: 'classic', deployments: [{ provider: 'c', model: 'gpt-4o' }] },
      { name: 'azure-think', deployments: [{ provider: 'az', model: 'prod-reasoner' }] },
    ],
  }, { env: { AZ_KEY: 'az-key-0123456789' } });
  closers.push(() => gw.close(0));
  return { gw, reasoning, classic, client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 }) };
}

const messages = [{ role: 'user' as const, content: 'hi' }];

describe('a model that refuses max_tokens and names max_completion_tokens', () => {
  it('is asked again at once with max_completion_tokens, and sent that from then on, buffered and streamed', async () => {
    const { gw, client, reasoning } = await setup();
    const first = await client.chat.completions.create({ model: 'think', messages, max_tokens: 50 }).withResponse();
    expect(first.data.choices[0]!.message.content).toBe('thought it through');
    expect(first.response.headers.get('x-switchyard-attempts')).toBe('2'); // two upstream calls, honestly counted
    expect(reasoning.hits.map((h) => [h.body.max_tokens, h.body.max_completion_tokens])).toEqual([
      [50, undefined],
      [undefined, 50],
    ]);

    // Learnt: no refusal any more.
    const second = await client.chat.completions.create({ model: 'think', messages, max_tokens: 60 }).withResponse();
    expect(second.response.headers.get('x-switchyard-attempts')).toBe('1');
    expect(reasoning.hits[2]!.body).toMatchObject({ model: 'o3-mini', max_completion_tokens: 60, stream: false });
    expect(reasoning.hits[2]!.body).not.toHaveProperty('max_tokens');

    const stream = await client.chat.completions.create({ model: 'think', messages, max_tokens: 70, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('thought it through');
    expect(reasoning.hits[3]!.body).toMatchObject({ max_completion_tokens: 70, stream: true, stream_options: { include_usage: true } });
    expect(reasoning.hits[3]!.body).not.toHaveProperty('max_tokens');

    // A max_completion_tokens of the client's own wins over its max_tokens.
    await client.chat.completions.create({ model: 'think', messages, max_tokens: 50, max_completion_tokens: 80 });
    expect(reasoning.hits[4]!.body).toMatchObject({ max_completion_tokens: 80 });
    expect(reasoning.hits[4]!.body).not.toHaveProperty('max_tokens');
    expect(reasoning.hits).toHaveLength(5);
    // The deployment did nothing wrong: its breaker (one failure opens it) is closed.
    expect(gw.gateway.health.state('r/o3-mini')).toBe('closed');
  });

  it('is learnt on Azure too, where the deployment name says nothing of the model', async () => {
    const { client, reasoning } = await setup();
    const r = await client.chat.completions.create({ model: 'azure-think', messages, max_tokens: 40 }).withResponse();
    expect(r.data.choices[0]!.message.content).toBe('thought it through');
    expect(reasoning.hits.map((h) => [h.body.max_tokens, h.body.max_completion_tokens])).toEqual([
      [40, undefined],
      [undefined, 40],
    ]);
    expect(reasoning.hits[1]!.headers['api-key']).toBe('az-key-0123456789');
  });

  it('is learnt for that model only: another model of the same provider still gets max_tokens, as the client sent it', async () => {
    const { client, reasoning } = await setup();
    await client.chat.completions.create({ model: 'think', messages, max_tokens: 50 });
    expect(reasoning.hits).toHaveLength(2);
    await client.chat.completions.create({ model: 'plain', messages, max_tokens: 50 });
    expect(reasoning.hits[2]!.body).toMatchObject({ model: 'gpt-4.1', max_tokens: 50 });
    expect(reasoning.hits[2]!.body).not.toHaveProperty('max_completion_tokens');
  });
});

describe('a model that refuses a value only it does not take', () => {
  it('fails over to a model that takes it; the refusing deployment is no breaker failure', async () => {
    const { gw, client, reasoning, classic } = await setup();
    const r = await client.chat.completions.create({ model: 'mixed', messages, temperature: 0.2 }).withResponse();
    expect(r.data.choices[0]!.message.content).toBe('classic answer');
    expect(r.response.headers.get('x-switchyard-deployment')).toBe('c/gpt-4o');
    expect(reasoning.hits).toHaveLength(1);
    expect(classic.hits).toHaveLength(1);
    expect(gw.gateway.health.state('r/o3-mini')).toBe('closed');
    const traces = (await (await fetch(`${gw.url}/traces?limit=1`)).json()) as { data: { attempts: { provider: string; status: number; errorType: string | null }[] }[] };
    expect(traces.data[0]!.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
      ['r', 400, 'invalid_request'],
      ['c', 200, null],
    ]);
  });

  it('is the answer when no candidate takes it: a 400 with the upstream message and param', async () => {
    const { client, reasoning } = await setup();
    const err = (await client.chat.completions.create({ model: 'think', messages, temperature: 0.2 }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('temperature');
    expect(err.message).toContain("Unsupported value: 'temperature' does not support 0.2 with this model");
    expect(reasoning.hits).toHaveLength(1);
  });

  it('is learnt: later requests with a value the model does not take pass it over without a call, the default and no value still reach it', async () => {
    const { gw, client, reasoning, classic } = await setup();
    await client.chat.completions.create({ model: 'mixed', messages, temperature: 0.2 });
    expect([reasoning.hits.length, classic.hits.length]).toEqual([1, 1]);

    const again = await client.chat.completions.create({ model: 'mixed', messages, temperature: 0.7 }).withResponse();
    expect(again.data.choices[0]!.message.content).toBe('classic answer');
    expect(again.response.headers.get('x-switchyard-attempts')).toBe('1'); // no call to the reasoning model
    expect([reasoning.hits.length, classic.hits.length]).toEqual([1, 2]);
    const traces = (await (await fetch(`${gw.url}/traces?limit=1`)).json()) as { data: { attempts: { provider: string; status: number; errorType: string | null }[] }[] };
    expect(traces.data[0]!.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
      ['r', 0, 'skipped'],
      ['c', 200, null],
    ]);

    // A stream too; and what the model takes (its default, no temperature at all) still goes to it.
    const stream = await client.chat.completions.create({ model: 'mixed', messages, temperature: 0.5, stream: true });
    for await (const _ of stream);
    expect([reasoning.hits.length, classic.hits.length]).toEqual([1, 3]);
    await client.chat.completions.create({ model: 'mixed', messages, temperature: 1 });
    await client.chat.completions.create({ model: 'mixed', messages });
    expect(reasoning.hits.map((h) => h.body.temperature)).toEqual([0.2, 1, undefined]);
    expect(classic.hits).toHaveLength(3);
  });

  it('learnt, is still the answer when no candidate takes the request: the same 400, message and param, without a call', async () => {
    const { client, reasoning } = await setup();
    await client.chat.completions.create({ model: 'think', messages, temperature: 0.2 }).catch(() => undefined);
    const err = (await client.chat.completions.create({ model: 'think', messages, temperature: 0.3 }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('temperature');
    // About this request's value, as the model would have put it.
    expect(err.message).toContain("Unsupported value: 'temperature' does not support 0.3 with this model. Only the default (1) value is supported.");
    expect(reasoning.hits).toHaveLength(1);
  });

  it('is no licence to fail over a request that is wrong as such: that ends the chain, the fallback not asked', async () => {
    const { client, classic } = await setup();
    const err = (await client.chat.completions.create({ model: 'mixed', messages, user: 'bad' }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('messages[0].role');
    expect(classic.hits).toHaveLength(0);
  });
});

describe('a refusal that follows another failure on the same candidate', () => {
  it('is still the answer: a 503 the candidate recovered from is not a candidate that might take the request', async () => {
    // The first call meets a 503 (retried: one retry allowed), the retry the refusal.
    const upstream = await startRawUpstream((res, hit, n) => {
      if (n === 1) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'The server is temporarily unavailable', type: 'server_error', param: null, code: null } }));
        return;
      }
      if (hit.body.temperature !== undefined && hit.body.temperature !== 1) {
        return refuse(res, `Unsupported value: 'temperature' does not support ${String(hit.body.temperature)} with this model. Only the default (1) value is supported.`, 'temperature', 'unsupported_value');
      }
      answer(res, hit, 'thought it through');
    });
    closers.push(() => upstream.close());
    const gw = await startGateway({
      resilience: { maxRetries: 1, backoff: { baseMs: 1, maxMs: 1 } },
      providers: [{ id: 'r', type: 'openai', baseUrl: upstream.url }],
      models: [{ name: 'think', deployments: [{ provider: 'r', model: 'o3-mini' }] }],
    });
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
    const err = (await client.chat.completions.create({ model: 'think', messages, temperature: 0.2 }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(upstream.hits).toHaveLength(2);
    // Not "all candidates unavailable, retry in a second": asked again, it is refused again.
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.param).toBe('temperature');
    expect(err.message).toContain("'temperature' does not support 0.2 with this model");
  });
});

describe('requests in flight when a model is learnt to refuse max_tokens', () => {
  it('each is asked again with max_completion_tokens, not only the one whose refusal came first', async () => {
    // Both requests reach the upstream before either refusal is sent: the second refusal
    // arrives when the adapter has already learnt the model from the first.
    let refuseAll!: () => void;
    const bothIn = new Promise<void>((r) => (refuseAll = r));
    let withMaxTokens = 0;
    const upstream = await startRawUpstream(async (res, hit) => {
      if (hit.body.max_tokens !== undefined) {
        if (++withMaxTokens === 2) refuseAll();
        await bothIn;
        return refuse(res, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
      }
      answer(res, hit, 'thought it through');
    });
    closers.push(() => upstream.close());
    const gw = await startGateway({
      resilience: { maxRetries: 0 },
      providers: [{ id: 'r', type: 'openai', baseUrl: upstream.url }],
      models: [{ name: 'think', deployments: [{ provider: 'r', model: 'o3-mini' }] }],
    });
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
    const ask = () =>
      client.chat.completions.create({ model: 'think', messages, max_tokens: 50 }).then(
        (r) => r.choices[0]!.message.content,
        (e: unknown) => (e instanceof OpenAI.APIError ? `${e.status} ${e.message}` : String(e)),
      );
    const [a, b] = await Promise.all([ask(), ask()]);
    expect([a, b]).toEqual(['thought it through', 'thought it through']);
    expect(upstream.hits.map((h) => [h.body.max_tokens, h.body.max_completion_tokens])).toEqual([
      [50, undefined],
      [50, undefined],
      [undefined, 50],
      [undefined, 50],
    ]);
  });
});
