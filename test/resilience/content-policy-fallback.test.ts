/**
 * REVIEW: when a contentPolicyFallbacks candidate itself refuses on content
 * policy, the executor restarts the content-policy chain from its first
 * candidate (executor.ts: `candidates = next; ci = -1`) — forever, until the
 * request deadline. One client request becomes a tight loop of upstream calls.
 */
import { afterEach, expect, it } from 'vitest';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const refusal = JSON.stringify({ error: { message: 'Your request was rejected by our content_policy', type: 'invalid_request_error', code: 'content_policy_violation', param: null } });

let up: RawUpstream[] = [];
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  for (const u of up) await u.close();
  up = [];
});

it('a refusing content-policy fallback ends the request, it does not loop until the deadline', async () => {
  const refuse = () => startRawUpstream((res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(refusal);
  });
  const a = await refuse();
  const b = await refuse();
  up = [a, b];
  gw = await startGateway({
    resilience: { deadlineMs: 1500, requestTimeoutMs: 1000 },
    providers: [
      { id: 'a', type: 'openai', baseUrl: a.url },
      { id: 'b', type: 'openai', baseUrl: b.url },
    ],
    models: [
      { name: 'main', deployments: [{ provider: 'a', model: 'm-a' }], contentPolicyFallbacks: ['lenient'] },
      { name: 'lenient', deployments: [{ provider: 'b', model: 'm-b' }] },
    ],
  });
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'main', messages: [{ role: 'user', content: 'x' }] }),
  });
  const body = (await res.json()) as { error: { code: string } };
  // One call to the primary, one to the fallback, then the refusal goes back to the client.
  expect(b.hits.length).toBe(1);
  expect(a.hits.length).toBe(1);
  expect(res.status).toBe(400);
  expect(body.error.code).toBe('content_policy_violation');
});
