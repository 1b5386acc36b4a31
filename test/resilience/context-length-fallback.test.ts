/**
 * REVIEW: after a context-length refusal the executor should only try
 * candidates with a larger (or unknown) contextWindow. It keeps one floor and
 * OVERWRITES it with each refusal (executor.ts: `contextFloor = { model,
 * window: d.contextWindow ?? 0 }`), so a refusal from a candidate with an
 * unknown window resets the floor to 0 and re-admits candidates smaller than
 * one that already refused: a wasted upstream call that cannot succeed.
 */
import { afterEach, expect, it } from 'vitest';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const tooLong = JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' } });

let ups: RawUpstream[] = [];
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  for (const u of ups) await u.close();
  ups = [];
});

it('a candidate smaller than one that already refused for context length is never called', async () => {
  const refuse = () => startRawUpstream((res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(tooLong);
  });
  const [a, b, c] = [await refuse(), await refuse(), await refuse()];
  ups = [a, b, c];
  gw = await startGateway({
    providers: [
      { id: 'a', type: 'openai', baseUrl: a.url },
      { id: 'b', type: 'openai', baseUrl: b.url },
      { id: 'c', type: 'openai', baseUrl: c.url },
    ],
    models: [
      { name: 'big', deployments: [{ provider: 'a', model: 'm-a', contextWindow: 8192 }], fallbacks: ['unknown', 'small'] },
      { name: 'unknown', deployments: [{ provider: 'b', model: 'm-b' }] },
      { name: 'small', deployments: [{ provider: 'c', model: 'm-c', contextWindow: 4096 }] },
    ],
  });
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'big', messages: [{ role: 'user', content: 'x' }] }),
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('context_length_exceeded');
  expect([a.hits.length, b.hits.length]).toEqual([1, 1]);
  expect(c.hits.length).toBe(0);
});
