/**
 * An upstream 429 whose Retry-After no upstream can mean (3,000 years, or too
 * long to be a number): read as absent, the deployment cools down for
 * cooldownMs and then serves again, and the client's Retry-After says so. Taken
 * as given, it cooled the deployment down until the process restarted (and for
 * an infinite one told the client to retry in 1 s). The same for a rate-limit
 * reset more than a day ahead with nothing remaining: it paced the deployment out.
 *
 * And a rate limit whose wait is named only in its message (OpenAI's 429 for a
 * tokens-per-minute limit: "Please try again in 20s.", Azure's "retry after 20
 * seconds"): the deployment cools down for that long, and the client's
 * Retry-After says so. Without the hint it cooled down for cooldownMs (here a
 * minute), and the client was told to come back long after the upstream would
 * have served it.
 */
import { expect, it } from 'vitest';
import { closeAfterEach, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream], () => (gw = upstream = undefined));

const ANSWER = JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'back' }, finish_reason: 'stop' }] });

it.each([
  ['3,000 years', '99999999999'],
  ['400 nines', '9'.repeat(400)],
])('a 429 with Retry-After of %s cools the deployment down for cooldownMs, not for good', async (_name, retryAfter) => {
  upstream = await startRawUpstream((res, _hit, n) => {
    if (n === 1) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': retryAfter });
      res.end(JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(ANSWER);
  });
  await expectRestFor(60);
});

const ask = () => fetch(`${gw!.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });

/** With the upstream's first answer a refusal and every later one ANSWER: refused (503, Retry-After `s`) until `s` seconds have passed, then served. */
async function expectRestFor(s: number): Promise<void> {
  const clock = new VirtualClock();
  gw = await startChatOver(upstream!.url, { resilience: { maxRetries: 0, cooldownMs: 60_000 } }, {}, { clock });
  const refused = await ask();
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe(String(s));
  await refused.text();

  await clock.advance(s * 1000 - 1000);
  const still = await ask();
  expect(still.status).toBe(503);
  await still.text();
  expect(upstream!.hits).toHaveLength(1);

  await clock.advance(1001);
  const served = await ask();
  expect(served.status).toBe(200);
  expect(((await served.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('back');
  expect(upstream!.hits).toHaveLength(2);
}

const LIMITED = {
  error: { message: 'Rate limit reached for m on tokens per min (TPM): Limit 30000, Used 29500, Requested 900. Please try again in 20s.', type: 'tokens', code: 'rate_limit_exceeded' },
};

it.each([
  ['a 429', 429],
  ['a 200 that is an error object', 200],
])('%s naming its wait only in the message cools the deployment down for that wait', async (_name, status) => {
  upstream = await startRawUpstream((res, _hit, n) => {
    res.writeHead(n === 1 ? status : 200, { 'content-type': 'application/json' });
    res.end(n === 1 ? JSON.stringify(LIMITED) : ANSWER);
  });
  await expectRestFor(20);
});

it('an answer whose rate-limit headers say nothing is left until 999999h does not pace the deployment out', async () => {
  upstream = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '999999h' });
    res.end(ANSWER);
  });
  gw = await startChatOver(upstream.url, { resilience: { maxRetries: 0 } }, {}, { clock: new VirtualClock() });
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status, await res.text()).toBe(200);
  }
  expect(upstream.hits).toHaveLength(2);
});
