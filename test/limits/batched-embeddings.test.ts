/**
 * An embeddings request with more texts than Gemini (100) or Cohere (96) take in one
 * call goes out as several calls, and each is a request to the upstream's rpm: the
 * pacer counts every call, so a provider `rpm` holds for the calls the upstream sees.
 * Over real sockets to a loopback upstream speaking both wires, on a manual
 * VirtualClock (nothing refills while a test runs).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let upstream: Server;
let url: string;
/** Upstream calls received, by path. */
const calls: string[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { requests?: unknown[]; texts?: string[] };
      const path = req.url ?? '';
      calls.push(path);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (path.includes(':batchEmbedContents')) res.end(JSON.stringify({ embeddings: body.requests!.map(() => ({ values: [0.5, 0.25] })) }));
      else res.end(JSON.stringify({ id: 'e', embeddings: { float: body.texts!.map(() => [0.5, 0.25]) }, texts: body.texts, meta: { billed_units: { input_tokens: body.texts!.length } } }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  gw = undefined;
  calls.length = 0;
});

/** A gateway whose `gem` and `co` providers allow `rpm` each (a burst of all of it, below 10), refusing at once when full. */
async function start(rpm: number): Promise<OpenAI> {
  gw = await startGateway(
    {
      resilience: { throttleMaxWaitMs: 0, maxRetries: 0 },
      providers: [
        { id: 'gem', type: 'gemini', baseUrl: `${url}/gem`, rpm },
        { id: 'co', type: 'cohere', baseUrl: `${url}/co`, rpm },
      ],
      models: [
        { name: 'e-gem', deployments: [{ provider: 'gem', model: 'g' }] },
        { name: 'e-co', deployments: [{ provider: 'co', model: 'c' }] },
      ],
    },
    { clock: new VirtualClock() },
  );
  return new OpenAI({ baseURL: gw.baseURL, apiKey: 'none', maxRetries: 0 });
}

const texts = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

/** The status of an embeddings request for `n` texts. */
async function embed(client: OpenAI, model: string, n: number): Promise<number> {
  try {
    const res = await client.embeddings.create({ model, input: texts(n), encoding_format: 'float' });
    expect(res.data).toHaveLength(n);
    return 200;
  } catch (err) {
    return err instanceof OpenAI.APIError ? (err.status ?? 0) : 0;
  }
}

describe('batched embeddings are paced call by call', () => {
  it.each([
    ['e-gem', 250, 3],
    ['e-co', 200, 3],
  ])('%s: %i texts are %i calls, and a provider rpm of 8 lets two such requests through, not eight', async (model, n, perRequest) => {
    const client = await start(8);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await embed(client, model, n));
    // 3 + 3 calls fit in 8; a third request's 3 would make 9.
    expect(statuses).toEqual([200, 200, 503, 503]);
    expect(calls).toHaveLength(2 * perRequest);
    // A request of one call still fits the 2 left.
    expect(await embed(client, model, 5)).toBe(200);
    expect(calls).toHaveLength(2 * perRequest + 1);
  });

  it('a request that fits one call counts once', async () => {
    const client = await start(8);
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push(await embed(client, 'e-gem', 100));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 503]);
    expect(calls).toHaveLength(8);
  });
});

/** A gateway whose one provider `gem` (Gemini, rpm 5) is at `port` on loopback, refusing at once when full. */
async function gemAt(port: number): Promise<OpenAI> {
  gw = await startGateway(
    {
      resilience: { throttleMaxWaitMs: 0, maxRetries: 0 },
      providers: [{ id: 'gem', type: 'gemini', baseUrl: `http://127.0.0.1:${port}`, rpm: 5 }],
      models: [{ name: 'e', deployments: [{ provider: 'gem', model: 'g' }] }],
    },
    { clock: new VirtualClock() },
  );
  return new OpenAI({ baseURL: gw.baseURL, apiKey: 'none', maxRetries: 0 });
}

const listen = (server: Server, port = 0) => new Promise<number>((r) => server.listen(port, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
const stop = (server: Server) => new Promise<void>((r) => (server.listening ? server.close(() => r()) : r()));

describe('a batch whose later call is refused', () => {
  it('keeps the capacity of its calls that went out: the upstream counted them', async () => {
    // Gemini-style: holds the first four calls (sent four at a time) until all four are in, then
    // stops listening and answers them, each on a connection it closes: the fifth call, on a
    // new connection, is refused.
    let held: (() => void)[] = [];
    let received = 0;
    const flaky: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received++;
        const n = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { requests: unknown[] }).requests.length;
        held.push(() => {
          res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
          res.end(JSON.stringify({ embeddings: Array.from({ length: n }, () => ({ values: [0.5] })) }));
        });
        if (held.length === 4) {
          flaky.close();
          for (const answer of held) answer();
          held = [];
        }
      });
    });
    const port = await listen(flaky);
    try {
      const client = await gemAt(port);
      // 500 texts: 5 calls, the whole rpm. Four reach the upstream, the fifth is refused.
      expect(await embed(client, 'e', 500)).toBe(503);
      expect(received).toBe(4);
      // Listening again, the upstream would take a sixth call within its minute of 5: the
      // pacer must still hold the batch's capacity, not have given it back for the refusal.
      await listen(flaky, port);
      expect(await embed(client, 'e', 50)).toBe(503);
      expect(received).toBe(4);
    } finally {
      await stop(flaky);
    }
  });
});

describe('a batch whose every call is refused', () => {
  it('gives its capacity back: calls started beside a refused one prove nothing reached the upstream', async () => {
    let received = 0;
    const later: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ embeddings: Array.from({ length: 50 }, () => ({ values: [0.5] })) }));
      });
    });
    // A port nothing listens on at first (a provider down): the four calls started at once are all refused.
    const port = await listen(later);
    await stop(later);
    try {
      const client = await gemAt(port);
      // 500 texts: 5 calls, the whole rpm; none reaches anything.
      expect(await embed(client, 'e', 500)).toBe(503);
      // Back up within the minute: the rpm of 5 is all still there.
      await listen(later, port);
      expect(await embed(client, 'e', 50)).toBe(200);
      expect(received).toBe(1);
    } finally {
      await stop(later);
    }
  });
});
