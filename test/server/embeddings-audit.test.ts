/**
 * POST /v1/embeddings end to end, with the official openai SDK, over every
 * provider type that embeds: one loopback upstream speaks each provider's wire
 * (OpenAI /v1/embeddings, Azure deployments, Gemini batchEmbedContents, Cohere
 * /v2/embed, Ollama /api/embed) and answers vectors that float32 holds exactly.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

interface Seen {
  path: string;
  body: Record<string, unknown>;
}

/** The vector for input number i: float32-exact values. */
const vec = (i: number): number[] => [i + 0.5, -0.25, 0.125 * (i + 1), 3];
/** The vector for a text: `t17` → vec(17), others by position. */
const vecOf = (x: unknown, i: number): number[] => (typeof x === 'string' && /^t\d+$/.test(x) ? vec(Number(x.slice(1))) : vec(i));
const items = (input: unknown): unknown[] => (typeof input === 'string' || (Array.isArray(input) && typeof input[0] === 'number') ? [input] : (input as unknown[]));

function b64(values: number[]): string {
  const f = Float32Array.from(values);
  return Buffer.from(f.buffer).toString('base64');
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

function countOf(input: unknown): number {
  if (typeof input === 'string') return 1;
  if (Array.isArray(input) && typeof input[0] === 'number') return 1;
  return (input as unknown[]).length;
}

let upstream: Server;
let url: string;
const seen: Seen[] = [];
/** Status to answer the next requests to a path prefix with (consumed once each). */
const failures: { prefix: string; status: number }[] = [];
/** Misbehaviours of the next answer. */
const quirks = { oaiFloats: false, gemNoValues: false };

beforeAll(async () => {
  upstream = createServer(async (req, res) => {
    const body = await readJson(req);
    const path = req.url ?? '';
    seen.push({ path, body });
    const fail = failures.findIndex((f) => path.startsWith(f.prefix));
    if (fail >= 0) {
      const { status } = failures.splice(fail, 1)[0]!;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'upstream says no', type: 'server_error', code: null } }));
      return;
    }
    const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
    if (path.startsWith('/oai/') || path.startsWith('/az/')) {
      const n = countOf(body.input);
      json({
        object: 'list',
        data: items(body.input).map((x, i) => ({ object: 'embedding', index: i, embedding: body.encoding_format === 'base64' && !quirks.oaiFloats ? b64(vecOf(x, i)) : vecOf(x, i) })),
        model: `${String(body.model ?? 'azure-model')}-served`,
        usage: { prompt_tokens: 7 * n, total_tokens: 7 * n },
      });
    } else if (path.includes(':batchEmbedContents')) {
      const reqs = body.requests as unknown[];
      json({ embeddings: (reqs as { content: { parts: { text: string }[] } }[]).map((r, i) => (quirks.gemNoValues && i === 1 ? {} : { values: vecOf(r.content.parts[0]!.text, i) })) });
    } else if (path === '/co/v2/embed') {
      const texts = body.texts as string[];
      json({ id: 'x', embeddings: { float: texts.map((t, i) => vecOf(t, i)) }, texts, meta: { billed_units: { input_tokens: 5 * texts.length } } });
    } else if (path === '/ol/api/embed') {
      const n = countOf(body.input);
      json({ model: body.model, embeddings: items(body.input).map((x, i) => vecOf(x, i)), prompt_eval_count: 3 * n });
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

const PROVIDERS = ['oai', 'az', 'gem', 'co', 'ol'] as const;

function providers(base: string): Record<string, unknown>[] {
  return [
    { id: 'oai', type: 'openai', baseUrl: `${base}/oai/v1` },
    { id: 'az', type: 'azure', baseUrl: `${base}/az`, apiVersion: '2024-10-21' },
    { id: 'gem', type: 'gemini', baseUrl: `${base}/gem` },
    { id: 'co', type: 'cohere', baseUrl: `${base}/co` },
    { id: 'ol', type: 'ollama', baseUrl: `${base}/ol` },
    { id: 'anth', type: 'anthropic', baseUrl: `${base}/anth` },
  ];
}

let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  gw = await startGateway({
    resilience: { maxRetries: 0, backoff: { baseMs: 1, maxMs: 1 } },
    providers: providers(url),
    models: [
      ...PROVIDERS.map((p) => ({ name: `e-${p}`, deployments: [{ provider: p, model: `${p}-emb` }] })),
      { name: 'pair', strategy: 'weighted', deployments: [{ provider: 'oai', model: 'first', weight: 1000000 }, { provider: 'co', model: 'second', weight: 0.000001 }] },
      { name: 'skip', deployments: [{ provider: 'anth', model: 'claude' }, { provider: 'ol', model: 'ol-emb' }] },
      { name: 'gem-then-oai', strategy: 'weighted', deployments: [{ provider: 'gem', model: 'g', weight: 1000000 }, { provider: 'oai', model: 'o', weight: 0.000001 }] },
      { name: 'chat-only', deployments: [{ provider: 'anth', model: 'claude' }] },
    ],
  });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'none', maxRetries: 0 });
});
afterAll(() => gw?.close());

describe.each(PROVIDERS)('embeddings over %s', (p) => {
  const model = `e-${p}`;
  const texts = p === 'oai' || p === 'az';

  it('a string, decoded from the SDK default base64, exactly', async () => {
    const res = await client.embeddings.create({ model, input: 'hello' });
    expect(res.object).toBe('list');
    expect(res.data).toHaveLength(1);
    expect(res.data[0]!.object).toBe('embedding');
    expect(res.data[0]!.index).toBe(0);
    expect(Array.from(res.data[0]!.embedding as unknown as Float32Array)).toEqual(vec(0));
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens);
  });

  it('an array of strings as floats, in input order', async () => {
    const res = await client.embeddings.create({ model, input: ['a', 'b', 'c'], encoding_format: 'float', dimensions: 4, user: 'u1' });
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(res.data.map((d) => d.embedding)).toEqual([vec(0), vec(1), vec(2)]);
    const sent = seen.at(-1)!;
    if (texts) expect(sent.body.user).toBe('u1');
  });

  it('base64 explicitly: the string OpenAI sends', async () => {
    const res = await client.embeddings.create({ model, input: ['a', 'b'], encoding_format: 'base64' });
    expect(res.data.map((d) => d.embedding)).toEqual([b64(vec(0)), b64(vec(1))]);
  });

  it('token ids', async () => {
    const one = client.embeddings.create({ model, input: [1, 2, 3], encoding_format: 'float' });
    const many = client.embeddings.create({ model, input: [[1, 2], [3]], encoding_format: 'float' });
    if (texts) {
      expect((await one).data).toHaveLength(1);
      expect((await many).data).toHaveLength(2);
    } else {
      await expect(one).rejects.toMatchObject({ status: 400 });
      await expect(many).rejects.toMatchObject({ status: 400 });
    }
  });

  it('empty string, empty array, 2,049 inputs: 400', async () => {
    await expect(client.embeddings.create({ model, input: '' })).rejects.toMatchObject({ status: 400 });
    await expect(client.embeddings.create({ model, input: [] })).rejects.toMatchObject({ status: 400 });
    await expect(client.embeddings.create({ model, input: ['a', ''] })).rejects.toMatchObject({ status: 400, param: 'input' });
    await expect(client.embeddings.create({ model, input: [[1], []] })).rejects.toMatchObject({ status: 400, param: 'input' });
    await expect(client.embeddings.create({ model, input: Array.from({ length: 2049 }, () => 'x') })).rejects.toMatchObject({ status: 400 });
  });

  it('2,048 inputs', async () => {
    const res = await client.embeddings.create({ model, input: Array.from({ length: 2048 }, (_, i) => `t${i}`), encoding_format: 'float' });
    expect(res.data).toHaveLength(2048);
    expect(res.data.every((d, i) => d.index === i)).toBe(true);
    expect(res.data.every((d, i) => (d.embedding as number[])[0] === i + 0.5)).toBe(true);
  });

  it('headers and trace', async () => {
    const { response } = await client.embeddings.create({ model, input: 'x' }).withResponse();
    expect(response.headers.get('x-switchyard-deployment')).toBe(`${p}/${p}-emb`);
    expect(response.headers.get('x-switchyard-fallback')).toBe('false');
    expect(response.headers.get('x-switchyard-attempts')).toBe('1');
    const id = response.headers.get('x-request-id')!;
    const trace = (await (await fetch(`${gw.url}/traces/${id}`)).json()) as Record<string, unknown>;
    expect(trace).toMatchObject({ routedProvider: p, stream: false, status: 200 });
  });
});

describe('embeddings routing', () => {
  it('fails over a 500 and a 429 to the second deployment', async () => {
    for (const status of [500, 429]) {
      failures.push({ prefix: '/oai/', status });
      const { data, response } = await client.embeddings.create({ model: 'pair', input: ['a', 'b'] }).withResponse();
      expect(response.headers.get('x-switchyard-deployment')).toBe('co/second');
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
      expect(data.model).toBe('second');
      expect(Array.from(data.data[1]!.embedding as unknown as Float32Array)).toEqual(vec(1));
    }
  });

  it('skips a deployment whose provider cannot embed; 400 when none can', async () => {
    const { response } = await client.embeddings.create({ model: 'skip', input: 'a' }).withResponse();
    expect(response.headers.get('x-switchyard-deployment')).toBe('ol/ol-emb');
    await expect(client.embeddings.create({ model: 'chat-only', input: 'a' })).rejects.toMatchObject({ status: 400 });
  });
});

describe('embeddings probes', () => {
  it('token ids skip a deployment that takes text only', async () => {
    const { response } = await client.embeddings.create({ model: 'gem-then-oai', input: [[1, 2], [3]] }).withResponse();
    expect(response.headers.get('x-switchyard-deployment')).toBe('oai/o');
  });

  it('an openai-compatible upstream that answers floats to a base64 request', async () => {
    quirks.oaiFloats = true;
    try {
      for (const model of ['e-oai', 'e-az']) {
        const res = await client.embeddings.create({ model, input: ['t3', 't1'] });
        expect(res.data.map((d) => Array.from(d.embedding as unknown as Float32Array))).toEqual([vec(3), vec(1)]);
        expect(res.usage).toEqual({ prompt_tokens: 14, total_tokens: 14 });
        const floats = await client.embeddings.create({ model, input: ['t3'], encoding_format: 'float' });
        expect(floats.data[0]!.embedding).toEqual(vec(3));
      }
    } finally {
      quirks.oaiFloats = false;
    }
  });

  it('a Gemini answer missing a vector fails over, never reaches the client', async () => {
    quirks.gemNoValues = true;
    try {
      const { data, response } = await client.embeddings.create({ model: 'gem-then-oai', input: ['t0', 't1'], encoding_format: 'float' }).withResponse();
      expect(response.headers.get('x-switchyard-deployment')).toBe('oai/o');
      expect(data.data[1]!.embedding).toEqual(vec(1));
    } finally {
      quirks.gemNoValues = false;
    }
  });
});

describe('embeddings: keys', () => {
  it('key model list, rpm, and the trace', async () => {
    const g = await startGateway(
      {
        providers: providers(url),
        models: [{ name: 'e-oai', deployments: [{ provider: 'oai', model: 'oai-emb' }] }, { name: 'e-co', deployments: [{ provider: 'co', model: 'co-emb' }] }],
        keys: [{ id: 'k', key: '${K}', models: ['e-oai'], rpm: 2 }],
      },
      { env: { K: 'sk-test-1' } },
    );
    try {
      const c = new OpenAI({ baseURL: g.baseURL, apiKey: 'sk-test-1', maxRetries: 0 });
      await expect(new OpenAI({ baseURL: g.baseURL, apiKey: 'bad', maxRetries: 0 }).embeddings.create({ model: 'e-oai', input: 'x' })).rejects.toMatchObject({ status: 401 });
      await expect(c.embeddings.create({ model: 'e-co', input: 'x' })).rejects.toMatchObject({ status: 403 });
      const { response } = await c.embeddings.create({ model: 'e-oai', input: ['a', 'b'] }).withResponse();
      const id = response.headers.get('x-request-id')!;
      const trace = (await (await fetch(`${g.url}/traces/${id}`)).json()) as Record<string, unknown>;
      expect(trace).toMatchObject({ endpoint: 'embeddings', keyId: 'k', model: 'e-oai', deployment: 'oai/oai-emb', status: 200, stream: false, usage: { promptTokens: 14, completionTokens: 0 } });
      await c.embeddings.create({ model: 'e-oai', input: 'x' });
      const err = await c.embeddings.create({ model: 'e-oai', input: 'x' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 429 });
      expect(Number((err as { headers: Headers }).headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await g.close();
    }
  });
});
