/**
 * An embeddings answer must carry one vector per input: a client pairs the
 * vectors with its texts by position (or by `index`), so a 200 short of a
 * vector, with one too many, or with an index repeated or out of range pairs
 * them wrongly without a word. Such an answer fails the attempt as `server`
 * and the request fails over; with no candidate left the client gets the
 * gateway's 503, never the upstream's answer. Over loopback, for an
 * OpenAI-format upstream (its answer forwarded as bytes, counted in the shape
 * scan) and for the batched native adapters.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { startRawUpstream, type RawHit } from '../helpers/raw-upstream.js';
import { startCostPair, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startCohereServer } from '../servers/cohere-server.js';
import { startGeminiServer } from '../servers/gemini-server.js';
import { createOpenAIAdapter } from '../../src/providers/openai/index.js';
import type { ProviderConfig } from '../../src/config/types.js';
import type { TraceRecord } from '../../src/observability/events.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.reverse()) await o.close();
  open = [];
});

/** A vector as OpenAI sends it for `encoding_format` float or base64. */
const vector = (i: number, base64: boolean) => (base64 ? Buffer.from(Float32Array.from([i, -i]).buffer).toString('base64') : [i, -i]);

/** An OpenAI embeddings answer whose items carry these indexes (the upstream's model name is a marker the client must never see). */
function answerText(indexes: number[], base64 = false): string {
  const data = indexes.map((index) => ({ object: 'embedding', index, embedding: vector(index, base64) }));
  return JSON.stringify({ object: 'list', data, model: 'upstream-marker-model', usage: { prompt_tokens: 4, total_tokens: 4 } });
}

/** How many vectors the request asks for, read here as an upstream reads it. */
function inputsOf(hit: RawHit): number {
  const input = hit.body.input;
  return Array.isArray(input) && typeof input[0] !== 'number' ? input.length : 1;
}

const send = (res: ServerResponse, text: string) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(text);
};

/** `bad` answers what `badAnswer` makes of the request; `good` one vector per input. */
async function pair(badAnswer: (hit: RawHit) => string): Promise<{ gw: TestGateway; traces: TraceRecord[]; bad: () => number; good: () => number }> {
  const bad = await startRawUpstream((res, hit) => send(res, badAnswer(hit)));
  const good = await startRawUpstream((res, hit) => send(res, answerText([...Array(inputsOf(hit)).keys()], hit.body.encoding_format === 'base64')));
  const gw = await startCostPair({ id: 'bad', url: bad.url, model: 'e1' }, { id: 'good', url: good.url, model: 'e2' });
  open.push(bad, good, gw);
  const traces: TraceRecord[] = [];
  gw.gateway.bus.on('request', (t) => traces.push(t));
  return { gw, traces, bad: () => bad.hits.length, good: () => good.hits.length };
}

const embed = (gw: TestGateway, body: Record<string, unknown>) =>
  fetch(`${gw.baseURL}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'chat', ...body }) });

describe('an OpenAI-format embeddings answer that does not carry one vector per input', () => {
  const wrong: [string, Record<string, unknown>, (hit: RawHit) => string][] = [
    ['1 vector for 2 inputs', { input: ['a', 'b'] }, () => answerText([0])],
    ['3 vectors for 2 inputs', { input: ['a', 'b'] }, () => answerText([0, 1, 2])],
    ['2 vectors both of index 0', { input: ['a', 'b'] }, () => answerText([0, 0])],
    ['an index out of range', { input: ['a', 'b'] }, () => answerText([0, 2])],
    ['1 base64 vector for 2 inputs', { input: ['a', 'b'], encoding_format: 'base64' }, () => answerText([0], true)],
    // Floats answered to a base64 request are re-encoded by the gateway: counted before that.
    ['1 float vector for 2 inputs asked as base64', { input: ['a', 'b'], encoding_format: 'base64' }, () => answerText([0])],
    ['1 vector for 2 token-id arrays', { input: [[1, 2], [3]] }, () => answerText([0])],
  ];
  for (const [what, request, badAnswer] of wrong) {
    it(`fails over when it is ${what}`, async () => {
      const { gw, traces, bad, good } = await pair(badAnswer);
      const res = await embed(gw, request);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-switchyard-deployment')).toBe('good/e2');
      const body = (await res.json()) as { data: { index: number; embedding: unknown }[] };
      expect(body.data.map((e) => e.index)).toEqual([0, 1]);
      if (request.encoding_format === 'base64') expect(typeof body.data[0]!.embedding).toBe('string');
      expect([bad(), good()]).toEqual([1, 1]);
      expect(traces[0]!.attempts.map((a) => [a.provider, a.errorType])).toEqual([
        ['bad', 'server'],
        ['good', null],
      ]);
      expect(traces[0]!.fallbackUsed).toBe(false); // the same alias's second deployment, not a fallback alias
    });
  }

  const right: [string, Record<string, unknown>, (hit: RawHit) => string][] = [
    ['its vectors in any order', { input: ['a', 'b', 'c'] }, () => answerText([2, 0, 1])],
    ['one vector for one string', { input: 'a' }, () => answerText([0])],
    ['one vector for one token-id array', { input: [1, 2, 3] }, () => answerText([0])],
    ['base64 vectors, one per input', { input: ['a', 'b'], encoding_format: 'base64' }, () => answerText([0, 1], true)],
  ];
  for (const [what, request, badAnswer] of right) {
    it(`is forwarded as it came when it carries ${what}`, async () => {
      let sent = '';
      const { gw, bad, good } = await pair((hit) => (sent = badAnswer(hit)));
      const res = await embed(gw, request);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(sent);
      expect([bad(), good()]).toEqual([1, 0]);
    });
  }

  it('from a sole upstream ends in the gateway’s 503, not a 200, and not the upstream’s text', async () => {
    const up = await startRawUpstream((res) => send(res, answerText([0])));
    const gw = await startGateway({
      resilience: { maxRetries: 1, backoff: { baseMs: 1, maxMs: 1 } },
      providers: [{ id: 'up', type: 'openai', baseUrl: up.url }],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'e' }] }],
    });
    open.push(up, gw);
    const traces: TraceRecord[] = [];
    gw.gateway.bus.on('request', (t) => traces.push(t));
    const res = await embed(gw, { input: ['a', 'b'] });
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(JSON.parse(text).error.code).toBe('all_candidates_unavailable');
    expect(text).not.toContain('upstream-marker-model');
    // A server error is retried on the same deployment first, as any malformed answer is.
    expect(up.hits.length).toBe(2);
    expect(traces[0]!.attempts.map((a) => a.errorType)).toEqual(['server', 'server']);
  });

  it('is a server error that says the counts, never the answer', async () => {
    const up = await startRawUpstream((res) => send(res, answerText([1, 1])));
    const provider: ProviderConfig = { id: 'up', type: 'openai', baseUrl: up.url, locality: 'external', headers: {}, maxConnections: 1 };
    const adapter = createOpenAIAdapter(provider, { clock: new VirtualClock(), random: () => 0.5 });
    open.push(up, adapter);
    const ctx = { signal: new AbortController().signal, model: 'e', requestId: 'r1' };
    await expect(adapter.embeddings!({ model: 'e', input: ['a', 'b', 'c'] }, ctx)).rejects.toMatchObject({ category: 'server', message: 'upstream answered 2 embeddings for 3 inputs' });
    await expect(adapter.embeddings!({ model: 'e', input: ['a', 'b'] }, ctx)).rejects.toMatchObject({ category: 'server', message: 'upstream answered 2 embeddings whose indexes are not 0..1 once each' });
  });
});

describe('a native embeddings answer short of a vector, in a batched request', () => {
  const texts = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

  /** Alias `e` over `first` then `second` (cheapest first), no retries. */
  async function gatewayOver(type: 'cohere' | 'gemini', first: string, second: string): Promise<{ gw: TestGateway; traces: TraceRecord[] }> {
    const gw = await startGateway({
      resilience: { maxRetries: 0 },
      providers: [
        { id: 'first', type, baseUrl: first },
        { id: 'second', type, baseUrl: second },
      ],
      models: [
        {
          name: 'e',
          strategy: 'cost',
          deployments: [
            { provider: 'first', model: 'm1', price: { input: 1, output: 1 } },
            { provider: 'second', model: 'm2', price: { input: 2, output: 2 } },
          ],
        },
      ],
    });
    open.push(gw);
    const traces: TraceRecord[] = [];
    gw.gateway.bus.on('request', (t) => traces.push(t));
    return { gw, traces };
  }

  /** `n` texts asked of alias `e`: the first deployment's short answer failed, the second served all `n`. */
  async function expectServedBySecond(gw: TestGateway, traces: TraceRecord[], n: number): Promise<void> {
    const res = await fetch(`${gw.baseURL}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'e', input: texts(n) }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-deployment')).toBe('second/m2');
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(n);
    expect(traces[0]!.attempts.map((a) => [a.provider, a.errorType])).toEqual([
      ['first', 'server'],
      ['second', null],
    ]);
  }

  it('Cohere (96 texts a call): one call answered short fails the attempt over', async () => {
    const [first, second] = [await startCohereServer(), await startCohereServer()];
    open.push(first, second);
    // Whichever of its three calls comes first is answered with one vector.
    first.enqueue({ kind: 'embed', vectors: [[0.5, 0.25]] });
    const { gw, traces } = await gatewayOver('cohere', first.url, second.url);
    await expectServedBySecond(gw, traces, 200);
  });

  it('Gemini (100 texts a call): one call answered short fails the attempt over', async () => {
    const [first, second] = [await startGeminiServer(), await startGeminiServer()];
    open.push(first, second);
    first.enqueue({ kind: 'embeddings', omit: 1 });
    const { gw, traces } = await gatewayOver('gemini', first.url, second.url);
    await expectServedBySecond(gw, traces, 250);
  });
});
