/**
 * REVIEW: when a contentPolicyFallbacks candidate itself refuses on content
 * policy, the executor restarts the content-policy chain from its first
 * candidate (executor.ts: `candidates = next; ci = -1`) — forever, until the
 * request deadline. One client request becomes a tight loop of upstream calls.
 */
import { afterEach, expect, it } from 'vitest';
import { answersCompletion, sleep, startRawUpstream, type RawHandler, type RawUpstream } from '../helpers/raw-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';
import { until } from '../helpers/wait.js';

const refusal = JSON.stringify({ error: { message: 'Your request was rejected by our content_policy', type: 'invalid_request_error', code: 'content_policy_violation', param: null } });

let up: RawUpstream[] = [];
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  for (const u of up) await u.close();
  up = [];
});

/** Refuses every request on content policy, as OpenAI does. */
const refuses: RawHandler = (res) => {
  res.writeHead(400, { 'content-type': 'application/json' });
  res.end(refusal);
};

/** A chat request for `main` to the running gateway. */
const ask = () =>
  fetch(`${gw!.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'main', messages: [{ role: 'user', content: 'x' }] }),
  });

/** Alias `main` over `main`'s deployments, with `lenient` (one deployment) as its contentPolicyFallbacks. */
const policyGateway = (resilience: object, providers: object[], main: object[], lenient: object, clock?: VirtualClock) =>
  startGateway(
    {
      resilience,
      providers,
      models: [
        { name: 'main', deployments: main, contentPolicyFallbacks: ['lenient'] },
        { name: 'lenient', deployments: [lenient] },
      ],
    },
    { clock },
  );

it('a refusing content-policy fallback ends the request, it does not loop until the deadline', async () => {
  const a = await startRawUpstream(refuses);
  const b = await startRawUpstream(refuses);
  up = [a, b];
  gw = await policyGateway(
    { deadlineMs: 1500, requestTimeoutMs: 1000 },
    [{ id: 'a', type: 'openai', baseUrl: a.url }, { id: 'b', type: 'openai', baseUrl: b.url }],
    [{ provider: 'a', model: 'm-a' }],
    { provider: 'b', model: 'm-b' },
  );
  const res = await ask();
  const body = (await res.json()) as { error: { code: string } };
  // One call to the primary, one to the fallback, then the refusal goes back to the client.
  expect(b.hits.length).toBe(1);
  expect(a.hits.length).toBe(1);
  expect(res.status).toBe(400);
  expect(body.error.code).toBe('content_policy_violation');
});

/**
 * A request that waited for capacity and was then refused on content policy by the
 * deployment it waited for still had the alias's contentPolicyFallbacks to go to: the
 * waited-for attempt ran without them, and the refusal went back to the client.
 */
it('a deployment served after a capacity wait that refuses on content policy moves to the fallbacks', async () => {
  const a = await startRawUpstream(refuses);
  const b = await startRawUpstream(answersCompletion('m-b', 'fine'));
  up = [a, b];
  const clock = new VirtualClock();
  gw = await policyGateway(
    { deadlineMs: 300_000, requestTimeoutMs: 120_000, throttleMaxWaitMs: 120_000 },
    [{ id: 'a', type: 'openai', baseUrl: a.url, rpm: 1 }, { id: 'b', type: 'openai', baseUrl: b.url }],
    [{ provider: 'a', model: 'm-a' }],
    { provider: 'b', model: 'm-b' },
    clock,
  );
  // The first request spends `a`'s one request a minute (refused there, answered by `b`).
  expect((await ask()).status).toBe(200);
  // The second waits for `a`'s capacity, is refused by `a` again, and is answered by `b`.
  const idle = clock.pending;
  const second = ask();
  // Its deadline and its wait for `a` are armed; time moves a second at a time until `a` refills
  // (about a minute) and is asked, then stands still while the real sockets answer.
  await until(() => clock.pending >= idle + 2, 'the second request to arm its deadline and its wait for `a`');
  for (let s = 0; a.hits.length < 2 && s < 120; s++) {
    await clock.advance(1000);
    await sleep(2);
  }
  const res = await second;
  expect(a.hits.length).toBe(2);
  expect(b.hits.length).toBe(2);
  expect(res.status).toBe(200);
  expect(res.headers.get('x-switchyard-deployment')).toBe('b/m-b');
});

/**
 * After a refusal on content policy, the refusing alias's other deployments serve the same
 * model: one of them that was only throttled is not waited for when the fallbacks fail
 * (the wait would have ended in the same refusal, a minute later).
 */
it('a throttled sibling of the refusing deployment is not waited for once the fallbacks fail', async () => {
  const strict = await startRawUpstream(refuses);
  // Answers the first request, then is down.
  const lenient = await startRawUpstream((res, _hit, n) => {
    if (n === 1) return answersCompletion('m-l', 'fine')(res, _hit, n);
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
  });
  up = [strict, lenient];
  const clock = new VirtualClock();
  gw = await policyGateway(
    { deadlineMs: 300_000, throttleMaxWaitMs: 120_000, maxRetries: 0 },
    [
      { id: 'a1', type: 'openai', baseUrl: strict.url, rpm: 1 },
      { id: 'a2', type: 'openai', baseUrl: strict.url },
      { id: 'l', type: 'openai', baseUrl: lenient.url },
    ],
    // a1 first (by weight), then a2: the same model behind two keys.
    [{ provider: 'a1', model: 'm', weight: 1e9 }, { provider: 'a2', model: 'm', weight: 1e-9 }],
    { provider: 'l', model: 'm-l' },
    clock,
  );
  // a1 refuses (its one request a minute spent), the fallback answers.
  expect((await ask()).status).toBe(200);
  // a1 is throttled, a2 refuses, the fallback is down: the refusal is the answer, at once.
  const t0 = clock.now();
  const res = await ask();
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('content_policy_violation');
  expect(clock.now()).toBe(t0);
  expect(strict.hits.length).toBe(2);
  expect(lenient.hits.length).toBe(2);
});
