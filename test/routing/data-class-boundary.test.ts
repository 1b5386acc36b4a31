/**
 * Every road out of a local-only request's chain, over real sockets: the alias's
 * fallbacks, its contentPolicyFallbacks, a stream resumed after a cut, a pin, `auto`'s
 * tiers and embeddings. Each has an external, prefill- and embeddings-capable deployment
 * waiting behind a failing local one; the external upstream must never see a request.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { seenText } from '../helpers/wait.js';

type LocalMode = 'ok' | 'fail' | 'policy' | 'cut';
let mode: LocalMode = 'ok';
let ext: RawUpstream;
let loc: RawUpstream;
let gw: TestGateway;
/** What the client of `post` has read: a local stream goes on (or is cut) once the client has its first piece. */
let seen = seenText();

const completion = (model: string) =>
  JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
const vectors = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1] }, { object: 'embedding', index: 1, embedding: [0.2] }], model: 'e', usage: { prompt_tokens: 2, total_tokens: 2 } });

beforeAll(async () => {
  ext = await startRawUpstream((res, hit) => {
    if (hit.url.endsWith('/embeddings')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(vectors);
    }
    if (hit.body.stream === true) {
      sseHead(res);
      res.write(chunk('ext', { content: ' and the rest' }, 'stop'));
      return void res.end('data: [DONE]\n\n');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completion('ext'));
  });
  loc = await startRawUpstream(async (res, hit) => {
    if (mode === 'fail' || hit.url.endsWith('/embeddings')) {
      res.writeHead(500, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"boom"}}');
    }
    if (mode === 'policy') {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: 'rejected by our content_policy', type: 'invalid_request_error', code: 'content_policy_violation' } }));
    }
    const resuming = JSON.stringify(hit.body.messages).includes('part');
    if (mode === 'cut' && resuming && hit.body.model === 'l') {
      // The cut deployment cannot continue: the resume moves on along the chain, past `cloud`'s external one.
      res.writeHead(500, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"boom"}}');
    }
    if (hit.body.stream === true) {
      sseHead(res);
      res.write(chunk('loc', { content: 'part' }));
      await seen.reached('"part"');
      // A cut after the commit point: the stream resumes, on a local deployment only.
      if (mode === 'cut' && !resuming) return void res.destroy();
      res.write(chunk('loc', { content: ' done' }, 'stop'));
      return void res.end('data: [DONE]\n\n');
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completion('loc'));
  });
  const both = ['prefill', 'embeddings'];
  gw = await startGateway(
    {
      // The cases share deployments: no breaker may open on the failures the cases script.
      resilience: { maxRetries: 0, deadlineMs: 5000, requestTimeoutMs: 3000, breaker: { failureThreshold: 1000 } },
      providers: [
        { id: 'ext', type: 'openai', baseUrl: ext.url },
        { id: 'loc', type: 'openai', baseUrl: loc.url, locality: 'local' },
        { id: 'loc2', type: 'openai', baseUrl: loc.url, locality: 'local' },
      ],
      models: [
        { name: 'main', deployments: [{ provider: 'loc', model: 'l', capabilities: both }], fallbacks: ['cloud', 'spare'], contentPolicyFallbacks: ['cloud'] },
        { name: 'cloud', deployments: [{ provider: 'ext', model: 'e', capabilities: both }] },
        { name: 'spare', deployments: [{ provider: 'loc2', model: 'l2', capabilities: both }] },
      ],
      auto: { tiers: ['cloud', 'main'] },
      keys: [
        { id: 'restricted', key: '${R}', dataClass: 'restricted' },
        { id: 'public', key: '${P}', dataClass: 'public' },
        { id: 'closed', key: '${C}', allowExternal: false },
      ],
    },
    { env: { R: 'rk', P: 'pk', C: 'ck' } },
  );
});
afterAll(async () => {
  await gw.close(0);
  await ext.close();
  await loc.close();
});
beforeEach(() => {
  mode = 'ok';
});

async function post(path: string, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  seen = seenText();
  const r = await fetch(`${gw.baseURL}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, text: await seen.readAll(r), deployment: r.headers.get('x-switchyard-deployment') };
}
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'patient record' }], ...extra });

const LOCAL_ONLY: Array<[string, string, Record<string, string>]> = [
  ['a restricted key', 'rk', {}],
  ['a public key raising its class by header', 'pk', { 'x-switchyard-data-class': ' Confidential' }],
  ['a key with allowExternal: false lowering by header', 'ck', { 'x-switchyard-data-class': 'public' }],
];

it.each(LOCAL_ONLY)('%s: fail-over goes to the local fallback past the external one', async (_n, key, headers) => {
  const before = ext.hits.length;
  mode = 'fail';
  // loc and loc2 share an upstream that fails: nothing local can serve.
  expect((await post('/chat/completions', key, chat('main'), headers)).status).toBe(503);
  expect((await post('/chat/completions', key, chat('auto'), headers)).status).toBe(503);
  expect((await post('/embeddings', key, { model: 'main', input: ['a', 'b'] }, headers)).status).toBe(503);
  mode = 'policy';
  expect((await post('/chat/completions', key, chat('main'), headers)).status).toBe(400);
  expect(ext.hits.length).toBe(before);
});

it.each(LOCAL_ONLY)('%s: a pin or an alias with only external deployments is a 403 policy_violation, sent nowhere', async (_n, key, headers) => {
  const before = ext.hits.length;
  for (const model of ['ext/e', 'ext/anything', 'cloud']) {
    const r = await post('/chat/completions', key, chat(model), headers);
    expect([r.status, JSON.parse(r.text).error.code]).toEqual([403, 'policy_violation']);
    // The refusal names the request's class or key and the model asked for, not the deployments it ruled out.
    if (model === 'cloud') expect(r.text).not.toContain('ext/');
  }
  expect(ext.hits.length).toBe(before);
});

it.each(LOCAL_ONLY)('%s: a stream cut mid-answer, which its own deployment cannot continue, resumes on the local fallback only', async (_n, key, headers) => {
  const before = ext.hits.length;
  mode = 'cut';
  const r = await post('/chat/completions', key, chat('main', { stream: true }), headers);
  expect(r.status).toBe(200);
  expect(r.text).toContain(' done');
  expect(r.text).not.toContain('the rest');
  expect(ext.hits.length).toBe(before);
});

it('the same roads do lead out for a public request (the test can tell)', async () => {
  const before = ext.hits.length;
  mode = 'fail';
  expect((await post('/chat/completions', 'pk', chat('main'))).deployment).toBe('ext/e');
  mode = 'policy';
  expect((await post('/chat/completions', 'pk', chat('main'))).deployment).toBe('ext/e');
  mode = 'cut';
  const cut = await post('/chat/completions', 'pk', chat('main', { stream: true }));
  expect(cut.text).toContain('the rest');
  mode = 'ok';
  expect((await post('/chat/completions', 'pk', chat('auto'))).deployment).toBe('ext/e');
  expect(ext.hits.length).toBe(before + 4);
});
