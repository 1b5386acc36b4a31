/**
 * `model: "auto"` on /v1/embeddings walks the tiers as chat does. Tiers are chat aliases,
 * and a chat deployment that declares no capabilities is assumed able to embed, so the
 * upstreams are asked and refuse: OpenAI with 403 "You are not allowed to generate
 * embeddings from this model", Azure with 400 OperationNotSupported. Each refusal is this
 * request's, not the deployment's: the next candidate is tried, and nothing is cooled
 * down, so chat traffic through the same deployments goes on. An embeddings deployment that
 * declares `embeddings` is asked first, and the chat tiers not at all when it answers. Real
 * loopback sockets, the official SDK as the client.
 */
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { completionText, startRawUpstream, type RawHit } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** An OpenAI- or Azure-like upstream: chat models chat, and refuse embeddings as each vendor does. */
function upstream(vendor: 'openai' | 'azure') {
  return (res: ServerResponse, hit: RawHit) => {
    const model = String(hit.body.model ?? hit.url.match(/deployments\/([^/]+)/)?.[1]);
    if (!hit.url.includes('/embeddings')) return void res.writeHead(200, { 'content-type': 'application/json' }).end(completionText(model, 'hi', 3, 1));
    if (model.startsWith('text-embedding')) {
      return json(res, 200, { object: 'list', model, data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 1, total_tokens: 1 } });
    }
    if (vendor === 'openai') return json(res, 403, { error: { message: 'You are not allowed to generate embeddings from this model', type: 'invalid_request_error', param: null, code: null } });
    json(res, 400, { error: { code: 'OperationNotSupported', message: `The embeddings operation does not work with the specified model, ${model}. Please choose different model and try again.` } });
  };
}

/** `declare`: the embeddings alias lists `capabilities: [embeddings]`; the chat tiers list none either way. */
async function setup(vendor: 'openai' | 'azure', declare = false) {
  const up = await startRawUpstream(upstream(vendor));
  closers.push(() => up.close());
  const provider = vendor === 'openai' ? { id: 'up', type: 'openai', baseUrl: up.url } : { id: 'up', type: 'azure', baseUrl: up.url.replace(/\/v1$/, ''), apiKey: '${AZ_KEY}' };
  const gw = await startGateway(
    {
      resilience: { maxRetries: 0, cooldownMs: 600_000, breaker: { failureThreshold: 1 } },
      providers: [provider],
      models: [
        { name: 'fast', deployments: [{ provider: 'up', model: 'gpt-4o-mini' }] },
        { name: 'smart', deployments: [{ provider: 'up', model: 'gpt-4o' }], fallbacks: ['embed'] },
        { name: 'embed', deployments: [{ provider: 'up', model: 'text-embedding-3-small', ...(declare ? { capabilities: ['embeddings'] } : {}) }] },
      ],
      auto: { tiers: ['fast', 'smart'] },
    },
    { env: { AZ_KEY: 'az-key-0123456789' }, clock: new VirtualClock() },
  );
  closers.push(() => gw.close(0));
  return { gw, up, client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 }) };
}

describe('auto on /v1/embeddings through chat tiers', () => {
  it.each(['openai', 'azure'] as const)('%s: a chat model refusing to embed passes the request on, and is not cooled down for chat', async (vendor) => {
    const { gw, up, client } = await setup(vendor);
    const e = await client.embeddings.create({ model: 'auto', input: 'hello', encoding_format: 'float' }).withResponse();
    expect(e.data.data[0]!.embedding).toEqual([0.1, 0.2]);
    expect(e.response.headers.get('x-switchyard-deployment')).toBe('up/text-embedding-3-small');
    expect(up.hits).toHaveLength(3);
    for (const key of ['up/gpt-4o-mini', 'up/gpt-4o']) expect(gw.gateway.health.state(key)).toBe('closed');

    // The cheapest tier still serves chat, at once: not cooling down, not open.
    const chat = await client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(chat.response.headers.get('x-switchyard-deployment')).toBe('up/gpt-4o-mini');
    expect(chat.response.headers.get('x-switchyard-attempts')).toBe('1');
    expect(chat.response.headers.get('x-switchyard-fallback')).toBe('false');
  });

  it.each(['openai', 'azure'] as const)('%s: a tier that declares embeddings is asked first, and the chat tiers that declare nothing are not asked', async (vendor) => {
    const { up, client } = await setup(vendor, true);
    const e = await client.embeddings.create({ model: 'auto', input: 'hello', encoding_format: 'float' }).withResponse();
    expect(e.data.data[0]!.embedding).toEqual([0.1, 0.2]);
    expect(e.response.headers.get('x-switchyard-deployment')).toBe('up/text-embedding-3-small');
    expect(e.response.headers.get('x-switchyard-selection')).toBe('auto:embed (fallback:embed (weighted))');
    expect(e.response.headers.get('x-switchyard-attempts')).toBe('1');
    expect(up.hits).toHaveLength(1);
    expect(up.hits[0]!.url).toContain('/embeddings');

    // Chat through auto still starts at the cheapest tier.
    const chat = await client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(chat.response.headers.get('x-switchyard-deployment')).toBe('up/gpt-4o-mini');
  });
});
