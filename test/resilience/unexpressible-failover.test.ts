/**
 * A candidate whose provider cannot express the request (n > 1 on Ollama, an
 * image URL Ollama cannot fetch) is passed over for one that can, over real
 * sockets; nothing is sent to it, and its breaker is untouched. Only when no
 * candidate can express it is the refusal the client's answer (400).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

async function setup(): Promise<{ gw: TestGateway; local: RawUpstream; cloud: RawUpstream }> {
  const local = await startRawUpstream((res) => {
    res.writeHead(500).end();
  });
  const cloud = await startRawUpstream((res, hit) => {
    const n = typeof hit.body.n === 'number' ? hit.body.n : 1;
    const choices = Array.from({ length: n }, (_, index) => ({ index, message: { role: 'assistant', content: `answer ${index}` }, finish_reason: 'stop' }));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt', choices, usage: { prompt_tokens: 1, completion_tokens: n, total_tokens: 1 + n } }));
  });
  closers.push(() => local.close(), () => cloud.close());
  const gw = await startGateway({
    resilience: { maxRetries: 0, breaker: { failureThreshold: 1 } },
    providers: [
      { id: 'local', type: 'ollama', baseUrl: local.url.replace(/\/v1$/, '') },
      { id: 'cloud', type: 'openai', baseUrl: cloud.url },
    ],
    models: [
      { name: 'chat', deployments: [{ provider: 'local', model: 'llama' }], fallbacks: ['cloud-chat'] },
      { name: 'cloud-chat', deployments: [{ provider: 'cloud', model: 'gpt' }] },
      { name: 'local-only', deployments: [{ provider: 'local', model: 'llama' }] },
    ],
  });
  closers.push(() => gw.close(0));
  return { gw, local, cloud };
}

const post = (gw: TestGateway, body: Record<string, unknown>) =>
  fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a candidate that cannot express the request', () => {
  it('is passed over for one that can: nothing sent to it, its breaker untouched', async () => {
    const { gw, local, cloud } = await setup();
    for (let i = 0; i < 3; i++) {
      const r = await post(gw, { model: 'chat', n: 2, messages: [{ role: 'user', content: 'hi' }] });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-switchyard-deployment')).toBe('cloud/gpt');
      expect(r.headers.get('x-switchyard-attempts')).toBe('1'); // the pass-over was no upstream attempt
      expect(((await r.json()) as { choices: unknown[] }).choices).toHaveLength(2);
    }
    expect(local.hits).toHaveLength(0);
    expect(cloud.hits).toHaveLength(3);
    // A breaker that opens after one failure is still closed: these were not failures of the deployment.
    expect(gw.gateway.health.state('local/llama')).toBe('closed');
    const traces = (await (await fetch(`${gw.url}/traces?limit=1`)).json()) as { data: { attempts: { provider: string; errorType: string | null }[] }[] };
    expect(traces.data[0]!.attempts.map((a) => [a.provider, a.errorType])).toEqual([
      ['local', 'skipped'],
      ['cloud', null],
    ]);
  });

  it('is the answer when no candidate can express it: a 400 naming what and where', async () => {
    const { gw, local } = await setup();
    const r = await post(gw, { model: 'local-only', n: 2, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(400);
    const body = (await r.json()) as { error: { code: string; message: string; param: string } };
    expect(body.error).toMatchObject({ code: 'invalid_request', param: 'n' });
    expect(body.error.message).toContain('ollama');
    expect(local.hits).toHaveLength(0);
  });
});

describe('an upstream refusing the request inside its stream', () => {
  it('is a refusal that reached the upstream, not a pass-over: the client gets it, the fallback is not asked (found by review)', async () => {
    const refusing = await startRawUpstream((res) => {
      sseHead(res);
      res.end('data: {"error":{"message":"Invalid value for temperature","code":400}}\n\n');
    });
    const spare = await startRawUpstream((res) => {
      res.writeHead(500).end();
    });
    closers.push(() => refusing.close(), () => spare.close());
    const gw = await startGateway({
      resilience: { maxRetries: 0 },
      providers: [
        { id: 'a', type: 'openai', baseUrl: refusing.url },
        { id: 'b', type: 'openai', baseUrl: spare.url },
      ],
      models: [
        { name: 'chat', deployments: [{ provider: 'a', model: 'm' }], fallbacks: ['spare'] },
        { name: 'spare', deployments: [{ provider: 'b', model: 'm' }] },
      ],
    });
    closers.push(() => gw.close(0));
    const r = await post(gw, { model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(400);
    expect(r.headers.get('x-switchyard-attempts')).toBe('1');
    await r.arrayBuffer();
    expect(refusing.hits).toHaveLength(1);
    expect(spare.hits).toHaveLength(0);
    const traces = (await (await fetch(`${gw.url}/traces?limit=1`)).json()) as { data: { attempts: { errorType: string | null }[] }[] };
    expect(traces.data[0]!.attempts.map((a) => a.errorType)).toEqual(['invalid_request']);
  });
});
