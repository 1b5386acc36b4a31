/**
 * `model: "auto"` and contentPolicyFallbacks, over real sockets: a tier's deployment that
 * refuses on content policy moves the request to that tier's contentPolicyFallbacks, as it
 * would had the client asked for the tier by name. auto found no alias called "auto", so the
 * refusal went back to the client although the tier declared where such requests go.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, completionText, sseHead, startRawUpstream, type RawHit, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const refusal = JSON.stringify({ error: { message: 'Your request was rejected by our content_policy', type: 'invalid_request_error', code: 'content_policy_violation', param: null } });

let up: RawUpstream;
/** strict-fast answers 500 instead of refusing. */
let fastDown = false;
let gw: TestGateway;
const models = () => up.hits.map((h) => h.body.model);

/** Models named strict-* refuse on content policy; the others answer, streamed or not. */
function answer(res: ServerResponse, hit: RawHit): void {
  const model = String(hit.body.model);
  if (fastDown && model === 'strict-fast') {
    res.writeHead(500, { 'content-type': 'application/json' });
    return void res.end('{"error":{"message":"boom"}}');
  }
  if (model.startsWith('strict-')) {
    res.writeHead(400, { 'content-type': 'application/json' });
    return void res.end(refusal);
  }
  if (hit.body.stream === true) {
    sseHead(res);
    res.write(chunk(model, { role: 'assistant', content: `from ${model}` }, 'stop'));
    return void res.end('data: [DONE]\n\n');
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(completionText(model, `from ${model}`, 3, 2));
}

beforeAll(async () => {
  up = await startRawUpstream(answer);
  gw = await startGateway(
    {
      resilience: { maxRetries: 0, breaker: { failureThreshold: 1000 } },
      providers: [{ id: 'up', type: 'openai', baseUrl: up.url }],
      models: [
        // fast cannot take tools: a tools request goes to smart, the cheapest capable tier.
        { name: 'fast', deployments: [{ provider: 'up', model: 'strict-fast', capabilities: ['json'] }], fallbacks: ['backup'], contentPolicyFallbacks: ['lenient'] },
        { name: 'backup', deployments: [{ provider: 'up', model: 'strict-backup', capabilities: ['json'] }], contentPolicyFallbacks: ['open'] },
        { name: 'smart', deployments: [{ provider: 'up', model: 'strict-smart', capabilities: ['tools', 'json'] }], contentPolicyFallbacks: ['open'] },
        { name: 'bare', deployments: [{ provider: 'up', model: 'strict-bare', capabilities: ['vision'] }] },
        { name: 'lenient', deployments: [{ provider: 'up', model: 'lenient-model' }] },
        { name: 'open', deployments: [{ provider: 'up', model: 'open-model' }] },
      ],
      auto: { tiers: ['fast', 'smart', 'bare'] },
    },
    { clock: new VirtualClock() },
  );
});
afterAll(async () => {
  await gw.close(0);
  await up.close();
});
beforeEach(() => {
  up.hits.length = 0;
  fastDown = false;
});

async function post(body: Record<string, unknown>) {
  const r = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, text: await r.text(), headers: r.headers };
}
const ask = (extra: Record<string, unknown> = {}) => ({ model: 'auto', messages: [{ role: 'user', content: 'hi' }], ...extra });
const tools = { tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] };

it.each([false, true])("stream %s: the first tier's refusal moves to its contentPolicyFallbacks, not to its fallbacks or the next tier", async (stream) => {
  const r = await post(ask({ stream }));
  expect(r.status).toBe(200);
  expect(r.text).toContain('from lenient-model');
  expect(r.headers.get('x-switchyard-deployment')).toBe('up/lenient-model');
  expect(r.headers.get('x-switchyard-selection')).toBe('auto:lenient (fallback:lenient (weighted))');
  expect(r.headers.get('x-switchyard-fallback')).toBe('true');
  expect(models()).toEqual(['strict-fast', 'lenient-model']);
});

it("the tier that took the request decides: a tools request served by smart moves to smart's, not fast's", async () => {
  const r = await post(ask(tools));
  expect(r.status).toBe(200);
  expect(r.headers.get('x-switchyard-deployment')).toBe('up/open-model');
  expect(models()).toEqual(['strict-smart', 'open-model']);
});

it("a tier's own fallback that refuses is the tier's refusal: fast's contentPolicyFallbacks, not backup's", async () => {
  // fast's own deployment fails (not a refusal) and backup, its fallback, refuses.
  fastDown = true;
  const r = await post(ask());
  expect(r.status).toBe(200);
  expect(r.headers.get('x-switchyard-deployment')).toBe('up/lenient-model');
  expect(models()).toEqual(['strict-fast', 'strict-backup', 'lenient-model']);
});

it('a tier without contentPolicyFallbacks returns the refusal as is, asking no other tier', async () => {
  const image = [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }];
  const r = await post({ model: 'auto', messages: [{ role: 'user', content: image }] });
  expect(r.status).toBe(400);
  expect(JSON.parse(r.text).error.code).toBe('content_policy_violation');
  expect(models()).toEqual(['strict-bare']);
});
