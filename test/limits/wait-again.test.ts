/**
 * A request that waited for capacity and was then answered a short 429 waits again,
 * rather than ending in 503 while its deadline leaves time: a free tier's limit is not
 * the client's error when waiting serves it. Bounded by the deadline and by a few waits
 * in all, so an upstream that answers 429 every time ends the request with a 503 and
 * Retry-After instead of holding it in a loop.
 *
 * The gateway runs on a manual VirtualClock; the test moves it only once the gateway
 * is known to be waiting (an attempt or throttle event), so each step's time is exact.
 */
import { expect, it } from 'vitest';
import { EventBus, type GatewayEventMap } from '../../src/observability/events.js';
import { closeAfterEach, openaiProvider, startChatOver, startGateway, type TestGateway } from '../helpers/gateway.js';
import { completionText, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
/** A second upstream, for the test that needs one. */
let other: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream, other], () => (gw = upstream = other = undefined));

const RATE = { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } };

const POLICY = { error: { message: 'Your request was rejected by our content_policy', type: 'invalid_request_error', code: 'content_policy_violation', param: null } };

/** An upstream that answers a 429 (Retry-After 1 s) to the requests `refuse` picks, and `then` (a 200 by default) to the rest. */
function upstreamRefusing(refuse: (n: number) => boolean, then?: { status: number; body: unknown }): Promise<RawUpstream> {
  return startRawUpstream((res, _hit, n) => {
    if (refuse(n)) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify(RATE));
      return;
    }
    res.writeHead(then?.status ?? 200, { 'content-type': 'application/json' });
    res.end(then ? JSON.stringify(then.body) : completionText('m', 'served', 5, 1));
  });
}

/** A manual clock and a bus whose attempt and throttle events the test reads. */
function watched() {
  const clock = new VirtualClock();
  const bus = new EventBus();
  const attempts: GatewayEventMap['attempt'][] = [];
  const throttles: GatewayEventMap['throttle'][] = [];
  bus.on('attempt', (e) => attempts.push(e));
  bus.on('throttle', (e) => throttles.push(e));
  const rateLimited = () => attempts.filter((a) => a.trace.status === 429).length;
  return { clock, bus, attempts, throttles, rateLimited };
}

/** The gateway over `upstream` (alias `chat`; `deployment` adds to its one deployment), on a watched clock and bus. */
async function start(resilience: Record<string, unknown>, deployment: Record<string, unknown> = {}) {
  const w = watched();
  gw = await startChatOver(upstream!.url, { resilience: { maxRetries: 0, cooldownMs: 60_000, ...resilience } }, deployment, { clock: w.clock, bus: w.bus });
  return w;
}

/** One chat request for `model` to the gateway. */
const ask = (model = 'chat') => fetch(`${gw!.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });

/** Settles `p` into a state the test can poll without awaiting it. */
function track(p: Promise<Response>) {
  const s: { res?: Response } = {};
  void p.then((r) => (s.res = r));
  return s;
}

it('waits for local capacity, meets a short 429, waits again and is served', async () => {
  // Hit 11 is the one sent after the local wait: the upstream's window was fuller than the pacer knew.
  upstream = await upstreamRefusing((n) => n === 11);
  // rpm 60: a burst of 10, then one a second.
  const { clock, throttles, rateLimited } = await start({ throttleMaxWaitMs: 2_000 }, { rpm: 60 });
  for (let i = 0; i < 10; i++) expect((await ask()).status).toBe(200);
  const t0 = clock.now();
  const pending = track(ask());
  // Out of local capacity: it waits for the next refill, 1 s away.
  await expect.poll(() => throttles.filter((e) => e.outcome === 'skipped').length).toBe(1);
  await clock.advance(1_000);
  // Sent, it is answered a 429 with Retry-After 1: the deployment is held, and the request waits again.
  await expect.poll(rateLimited).toBe(1);
  expect(pending.res).toBeUndefined();
  await clock.advance(1_000);
  await expect.poll(() => pending.res).toBeDefined();
  const res = pending.res!;
  expect(res.status).toBe(200);
  expect(res.headers.get('x-switchyard-attempts')).toBe('2');
  await res.text();
  expect(upstream.hits).toHaveLength(12);
  expect(clock.now() - t0).toBe(2_000);
  expect(throttles.filter((e) => e.outcome === 'acquired').map((e) => e.waitedMs)).toEqual([1_000, 1_000]);
});

it('an upstream that answers 429 every time ends in 503 with Retry-After after three waits, not a loop', async () => {
  upstream = await upstreamRefusing(() => true);
  const { clock, throttles, rateLimited } = await start({ throttleMaxWaitMs: 2_000, deadlineMs: 60_000 });
  const t0 = clock.now();
  const pending = track(ask());
  // Each 429 holds the deployment for 1 s; move the clock on only once the gateway has seen it.
  for (let seen = 1; seen <= 10; seen++) {
    await expect.poll(() => pending.res !== undefined || rateLimited() === seen).toBe(true);
    if (pending.res) break;
    await clock.advance(1_000);
  }
  await expect.poll(() => pending.res).toBeDefined();
  const res = pending.res!;
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('all_candidates_unavailable');
  // The first answer, then one more per wait: three waits of 1 s, and the fourth 429 is the last.
  expect(upstream.hits).toHaveLength(4);
  expect(throttles.filter((e) => e.outcome === 'acquired')).toHaveLength(3);
  expect(clock.now() - t0).toBe(3_000);
});

it.each([
  // The next hold would end past the deadline: answered at once, as a wait beyond it is today.
  ['ends past the deadline: 503 at once', 1_500, 503, 1_000],
  // The hold ends just as the deadline does: the wait ran the deadline out.
  ['ends with the deadline: 504', 2_000, 504, 2_000],
])('a second wait that %s', async (_name, deadlineMs, status, elapsed) => {
  upstream = await upstreamRefusing(() => true);
  const { clock, rateLimited } = await start({ throttleMaxWaitMs: 2_000, deadlineMs });
  const t0 = clock.now();
  const pending = track(ask());
  await expect.poll(rateLimited).toBe(1);
  await clock.advance(1_000);
  await expect.poll(rateLimited).toBe(2);
  if (status === 504) await clock.advance(1_000);
  await expect.poll(() => pending.res).toBeDefined();
  const res = pending.res!;
  expect(res.status).toBe(status);
  await res.text();
  expect(upstream.hits).toHaveLength(2);
  expect(clock.now() - t0).toBe(elapsed);
});

/**
 * After a wait, the deployment waited for refuses on content policy and the request moves to the
 * alias's contentPolicyFallbacks (as before); the fallback answers a short 429. It is waited for,
 * as it would be had the request not waited first, rather than the refusal going back to the client.
 */
it('a content-policy fallback met after a wait and held by a short 429 is waited for too', async () => {
  upstream = await upstreamRefusing((n) => n === 1, { status: 400, body: POLICY });
  other = await upstreamRefusing((n) => n === 1);
  const w = watched();
  gw = await startGateway(
    {
      resilience: { maxRetries: 0, throttleMaxWaitMs: 2_000 },
      providers: [openaiProvider('strict', upstream.url), openaiProvider('lenient', other.url)],
      models: [
        { name: 'main', deployments: [{ provider: 'strict', model: 'm' }], contentPolicyFallbacks: ['lenient'] },
        { name: 'lenient', deployments: [{ provider: 'lenient', model: 'm' }] },
      ],
    },
    { clock: w.clock, bus: w.bus },
  );
  const pending = track(ask('main'));
  // strict: a 429, waited out; then its refusal sends the request to lenient: a 429, waited out.
  await expect.poll(w.rateLimited).toBe(1);
  await w.clock.advance(1_000);
  await expect.poll(w.rateLimited).toBe(2);
  expect(pending.res).toBeUndefined();
  await w.clock.advance(1_000);
  await expect.poll(() => pending.res).toBeDefined();
  const res = pending.res!;
  expect(res.status).toBe(200);
  expect(res.headers.get('x-switchyard-deployment')).toBe('lenient/m');
  await res.text();
  expect([upstream.hits.length, other.hits.length]).toEqual([2, 2]);
});
