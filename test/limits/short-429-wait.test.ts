/**
 * An upstream 429 whose wait is short (within resilience.throttleMaxWaitMs) and no
 * retry left on that candidate: when no other candidate can serve, the request waits
 * it out, as it would a local throttle, and is sent again. It was answered 503 at once,
 * and the client saw an error that pacing should have absorbed. The wait is read from
 * Retry-After, from the message (OpenAI's "Please try again in 1.5s"), or from the
 * rate-limit headers of the spent limit; one beyond the budget is still a 503 at once.
 */
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/observability/events.js';
import { closeAfterEach, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { completionText, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream], () => (gw = upstream = undefined));

const RATE = { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } };
const HINTED = { error: { message: 'Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 1.5s.', type: 'tokens', code: 'rate_limit_exceeded' } };

/** Refuses the first request with a 429 (these headers and body), then serves. */
async function refusingOnce(headers: Record<string, string>, body: unknown): Promise<RawUpstream> {
  return startRawUpstream((res, _hit, n) => {
    if (n === 1) {
      res.writeHead(429, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionText('m', 'served', 5, 1));
  });
}

/** Sends one request and moves the clock on in 100 ms steps until it is answered. */
async function askWhileTimePasses(clock: VirtualClock): Promise<{ res: Response; waitedMs: number }> {
  const t0 = clock.now();
  let done = false;
  const p = ask().finally(() => (done = true));
  await expect.poll(() => upstream!.hits.length).toBe(1);
  for (let i = 0; i < 100 && !done; i++) {
    await new Promise((r) => setTimeout(r, 5));
    if (!done) await clock.advance(100);
  }
  return { res: await p, waitedMs: clock.now() - t0 };
}

/** The gateway over `upstream` (alias `chat`), on `clock`, with these resilience settings. */
async function start(clock: VirtualClock, resilience: Record<string, unknown> = { maxRetries: 0, throttleMaxWaitMs: 2_000, cooldownMs: 60_000 }, bus?: EventBus): Promise<void> {
  gw = await startChatOver(upstream!.url, { resilience }, {}, { clock, bus });
}

/**
 * A bus that counts the attempts answered 429 and the requests pacing passed over (`skipped`:
 * they met the deployment held, and wait): what the tests wait for instead of real time.
 */
function heldCounter(): { bus: EventBus; rateLimited: () => number; held: () => number } {
  const bus = new EventBus();
  let rateLimited = 0;
  let held = 0;
  bus.on('attempt', (e) => {
    if (e.trace.status === 429) rateLimited++;
  });
  bus.on('throttle', (e) => {
    if (e.outcome === 'skipped') held++;
  });
  return { bus, rateLimited: () => rateLimited, held: () => held };
}

/** One chat request to the gateway. */
const ask = () => fetch(`${gw!.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });

describe('a short upstream 429 with no other candidate', () => {
  it.each([
    ['Retry-After: 1', { 'retry-after': '1' }, RATE, 1_000],
    ['a wait named in the message', {}, HINTED, 1_500],
    ['the spent limit’s reset', { 'x-ratelimit-limit-requests': '60', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1s' }, RATE, 1_000],
  ])('(%s) is waited out and the request sent again, not answered 503', async (_name, headers, body, wait) => {
    upstream = await refusingOnce(headers, body);
    const clock = new VirtualClock();
    await start(clock);
    const { res, waitedMs } = await askWhileTimePasses(clock);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-attempts')).toBe('2');
    await res.text();
    expect(upstream.hits).toHaveLength(2);
    expect(waitedMs).toBeGreaterThanOrEqual(wait);
    expect(waitedMs).toBeLessThanOrEqual(2_000);
  });

  it('beyond throttleMaxWaitMs, is a 503 at once with that wait as Retry-After', async () => {
    upstream = await refusingOnce({ 'retry-after': '3' }, RATE);
    const clock = new VirtualClock();
    await start(clock);
    const t0 = clock.now();
    const res = await ask();
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('3');
    await res.text();
    expect(clock.now()).toBe(t0);
    expect(upstream.hits).toHaveLength(1);
  });
});

it('a request arriving while another waits out a short 429 waits for the deployment too, rather than meeting a cooldown (503)', async () => {
  upstream = await refusingOnce({ 'retry-after': '1' }, RATE);
  const clock = new VirtualClock();
  const { bus, rateLimited, held: metHold } = heldCounter();
  await start(clock, { maxRetries: 1, throttleMaxWaitMs: 2_000, cooldownMs: 60_000 }, bus);
  let settled = 0;
  const first = ask().finally(() => settled++);
  // The first was answered 429 and now sleeps out its Retry-After before its retry; the second
  // arrives meanwhile, meets the deployment held, and waits for it.
  await expect.poll(rateLimited).toBe(1);
  const second = ask().finally(() => settled++);
  await expect.poll(metHold).toBe(1);
  for (let i = 0; i < 30 && settled < 2; i++) {
    await clock.advance(100);
    await new Promise((r) => setTimeout(r, 5));
  }
  const [a, b] = await Promise.all([first, second]);
  expect([a.status, b.status]).toEqual([200, 200]);
  await a.text();
  await b.text();
  expect(upstream.hits).toHaveLength(3);
});

/**
 * Requests waiting out a 429's Retry-After all became sendable at the same moment, and an
 * upstream that says nothing of its limits (no rate-limit headers, no rpm configured) got
 * them all at once, most to be refused again. Now one goes first; the rest follow once it
 * has been answered.
 */
it('after a 429 wait, one request goes first and the others once it was answered', async () => {
  let open = false;
  const held: import('node:http').ServerResponse[] = [];
  const answer = (res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionText('m', 'served', 5, 1));
  };
  upstream = await startRawUpstream((res, _hit, n) => {
    if (n === 1) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify(RATE));
    } else if (open) answer(res);
    else held.push(res);
  });
  const clock = new VirtualClock();
  const { bus, rateLimited, held: metHold } = heldCounter();
  await start(clock, { maxRetries: 0, throttleMaxWaitMs: 5_000, cooldownMs: 60_000 }, bus);
  const first = ask();
  await expect.poll(rateLimited).toBe(1);
  // Two more arrive while the deployment is held for the Retry-After: both meet the hold.
  const others = [ask(), ask()];
  await expect.poll(metHold).toBe(2);
  expect(upstream.hits).toHaveLength(1);
  // The second passes in steps: the hold ends, then the others' looks at the probe in flight.
  for (let i = 0; i < 25; i++) {
    await clock.advance(100);
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(upstream.hits).toHaveLength(2);
  // The probe is answered: the two others go at once (the waiting room's next turn, no time passing).
  open = true;
  for (const res of held) answer(res);
  const t = clock.now();
  let settled = 0;
  for (const p of [first, ...others]) void p.then(() => settled++, () => settled++);
  for (let i = 0; i < 100 && settled < 3; i++) {
    await clock.advance(0);
    await new Promise((r) => setTimeout(r, 5));
  }
  expect(clock.now()).toBe(t);
  const all = await Promise.all([first, ...others]);
  expect(all.map((r) => r.status)).toEqual([200, 200, 200]);
  for (const r of all) await r.text();
  expect(upstream.hits).toHaveLength(4);
});
