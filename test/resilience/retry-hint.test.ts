/**
 * A rate limit whose wait is named only in its message (OpenAI's 429 for a
 * tokens-per-minute limit: "Please try again in 20s.", Azure's "retry after 20
 * seconds"): the deployment cools down for that long, and the client's
 * Retry-After says so. Without the hint it cooled down for cooldownMs (here a
 * minute) and the client was told to come back long after the upstream would
 * have served it.
 */
import { afterEach, expect, it } from 'vitest';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
afterEach(async () => {
  await gw?.close(0);
  await upstream?.close();
  gw = upstream = undefined;
});

const ANSWER = JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'back' }, finish_reason: 'stop' }] });
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
  const clock = new VirtualClock();
  gw = await startChatOver(upstream.url, { resilience: { maxRetries: 0, cooldownMs: 60_000 } }, {}, { clock });
  const ask = () => fetch(`${gw!.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }) });

  const refused = await ask();
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('20');
  await refused.text();

  await clock.advance(19_000);
  const still = await ask();
  expect(still.status).toBe(503);
  await still.text();
  expect(upstream.hits).toHaveLength(1);

  await clock.advance(1_001);
  const served = await ask();
  expect(served.status).toBe(200);
  expect(((await served.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('back');
  expect(upstream.hits).toHaveLength(2);
});
