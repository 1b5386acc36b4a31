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
import { chunk, completionText, sseHead, startRawUpstream, type RawHandler, type RawUpstream } from '../helpers/raw-upstream.js';
import { events, hungUp } from '../helpers/wait.js';

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
  /** Resolves when `n` requests are finished, as their `request` events say: call it before sending them. */
  const finished = (n: number) => events(gw.gateway.bus, 'request', n, undefined, `${n} requests the client left to be finished`);
  return { upstream, url: `${gw.baseURL}/chat/completions`, finished };
}

/**
 * Holds the first three requests until the gateway hangs up (their clients left); answers any
 * later one at once, so a fourth that was wrongly let through is a plain 200, not a hang.
 */
const holdFirstThree: RawHandler = async (res, _hit, n) => {
  if (n <= 3) return hungUp(res);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(COMPLETION);
};

const HEADERS = { 'content-type': 'application/json', authorization: 'Bearer sk-client' };

/**
 * A request the client abandons: a stream after its first chunk, a buffered one once `upstream`
 * has received it (its `nth` request): the client leaves while the request is out.
 */
async function abandon(url: string, stream: boolean, reached?: { upstream: RawUpstream; nth: number }): Promise<void> {
  const ac = new AbortController();
  const body = JSON.stringify({ model: 'chat', stream, messages: [{ role: 'user', content: 'hi' }] });
  if (reached) void reached.upstream.hit(reached.nth).then(() => ac.abort());
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
    const { url, finished } = await gateway(async (res, hit) => {
      if (hit.body.stream) {
        // An answer still going when the client leaves: the gateway must hang up on it.
        sseHead(res);
        res.write(chunk('m', { role: 'assistant', content: '' }));
        res.write(chunk('m', { content: 'w0 ' }));
        await hungUp(res);
        return;
      }
      // Every answer: three requests left until a reset 20 s away.
      res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '3', 'x-ratelimit-reset-requests': '20s' });
      res.end(COMPLETION);
    }, {});
    const settled = finished(3);
    for (let i = 0; i < 3; i++) await abandon(url, true);
    await settled;
    // A stream left in flight would be taken off the three the upstream says are left.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await ask(url));
    expect(statuses).toEqual([200, 200, 200]);
  });

  it("spends the provider's rpm once its request reached the upstream", async () => {
    const { upstream, url, finished } = await gateway(holdFirstThree, { provider: { rpm: 3 } });
    const settled = finished(3);
    for (let i = 0; i < 3; i++) await abandon(url, false, { upstream, nth: i + 1 });
    await settled;
    expect(upstream.hits.length).toBe(3);
    // The minute's three are spent: a fourth waits past throttleMaxWaitMs and is refused, unsent.
    expect(await ask(url)).toBe(503);
    expect(upstream.hits.length).toBe(3);
  });

  it("spends the client key's quota once its request reached the upstream", async () => {
    const { upstream, url, finished } = await gateway(holdFirstThree, { keys: [{ id: 'client', key: '${CLIENT_KEY}', rpm: 3 }] });
    const settled = finished(3);
    for (let i = 0; i < 3; i++) await abandon(url, false, { upstream, nth: i + 1 });
    await settled;
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
