/**
 * Capacity a request spent, over real sockets (found by chaos runs): a request
 * that reached its upstream is spent — for the provider's rpm and for the
 * client key's quota — whether the client left while it was out or its answer
 * could not be read; and a stream the client left is settled, not kept in
 * flight, where it would shrink every limit the upstream's headers teach.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { chunk, completionText, sleep, sseHead, startRawUpstream, type RawHandler } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const COMPLETION = completionText('m', 'ok', 1, 1, 'x');

async function gateway(handler: RawHandler, doc: Record<string, unknown>) {
  const upstream = await startRawUpstream(handler);
  closers.push(() => upstream.close());
  const gw = await startGateway(
    {
      resilience: { maxRetries: 0, throttleMaxWaitMs: 50 },
      providers: [{ id: 'up', type: 'openai', baseUrl: upstream.url, ...(doc.provider as object) }],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
      ...(doc.keys ? { keys: doc.keys } : {}),
    },
    { env: { CLIENT_KEY: 'sk-client' } },
  );
  closers.push(() => gw.close(0));
  return { upstream, url: `${gw.baseURL}/chat/completions` };
}

/** Answers well after the client has left (150 ms in). */
const answerLate: RawHandler = async (res) => {
  await sleep(500);
  if (!res.destroyed) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(COMPLETION);
  }
};

const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-client' };

/** A request the client abandons: a stream after its first chunk, a buffered one after `afterMs`. */
async function abandon(url: string, stream: boolean, afterMs = 150): Promise<void> {
  const ac = new AbortController();
  const body = JSON.stringify({ model: 'chat', stream, messages: [{ role: 'user', content: 'hi' }] });
  if (!stream) setTimeout(() => ac.abort(), afterMs);
  try {
    const r = await request(url, { method: 'POST', signal: ac.signal, body, headers: HEADERS });
    for await (const _ of r.body) ac.abort();
  } catch {
    // aborted, as meant
  }
}

async function ask(url: string): Promise<number> {
  const r = await request(url, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }), headers: HEADERS });
  await r.body.text();
  return r.statusCode;
}

describe('a client that leaves', () => {
  it('leaves no stream in flight: the limit the upstream teaches is all there', async () => {
    const { url } = await gateway(async (res, hit) => {
      if (hit.body.stream) {
        sseHead(res);
        res.write(chunk('m', { role: 'assistant', content: '' }));
        for (let i = 0; i < 20 && !res.destroyed; i++) {
          res.write(chunk('m', { content: `w${i} ` }));
          await sleep(20);
        }
        res.end('data: [DONE]\n\n');
        return;
      }
      // Every answer: three requests left until a reset 20 s away.
      res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '3', 'x-ratelimit-reset-requests': '20s' });
      res.end(COMPLETION);
    }, {});
    for (let i = 0; i < 3; i++) await abandon(url, true);
    await sleep(200);
    // A stream left in flight would be taken off the three the upstream says are left.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await ask(url));
    expect(statuses).toEqual([200, 200, 200]);
  });

  it("spends the provider's rpm once its request reached the upstream", async () => {
    const { upstream, url } = await gateway(
      answerLate,
      { provider: { rpm: 3 } },
    );
    for (let i = 0; i < 3; i++) await abandon(url, false);
    await sleep(50);
    expect(upstream.hits.length).toBe(3);
    // The minute's three are spent: a fourth waits past throttleMaxWaitMs and is refused, unsent.
    expect(await ask(url)).toBe(503);
    expect(upstream.hits.length).toBe(3);
  });

  it("spends the client key's quota once its request reached the upstream", async () => {
    const { upstream, url } = await gateway(
      answerLate,
      { keys: [{ id: 'client', key: '${CLIENT_KEY}', rpm: 3 }] },
    );
    for (let i = 0; i < 3; i++) await abandon(url, false);
    await sleep(50);
    expect(upstream.hits.length).toBe(3);
    expect(await ask(url)).toBe(429);
    // Each abandoned attempt is traced as a call the client left, not as one never made.
    const traces = (await (await fetch(`${new URL(url).origin}/traces?limit=10`)).json()) as { data: { attempts: { errorType: string | null }[] }[] };
    expect(traces.data.flatMap((t) => t.attempts.map((a) => a.errorType))).toEqual(['aborted', 'aborted', 'aborted']);
  });

  it("an answer that could not be read still spent the provider's rpm", async () => {
    const { upstream, url } = await gateway(
      (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"choices": [not json');
      },
      { provider: { rpm: 2 } },
    );
    // Each fails over to nothing: 503, after the upstream received it.
    expect(await ask(url)).toBe(503);
    expect(await ask(url)).toBe(503);
    expect(upstream.hits.length).toBe(2);
    // The minute's two are spent: the third is refused unsent.
    expect(await ask(url)).toBe(503);
    expect(upstream.hits.length).toBe(2);
  });
});
