/**
 * What a request reserves against a tpm limit while it is in flight, over real
 * sockets: a key of tpm 5,000, an upstream that holds every answer until the
 * test lets them go, and eight requests at once. A request whose prompt is too
 * small to be worth counting exactly (under 1 % of the smallest tpm) still
 * reserves its completion budget, 1,024 without max_tokens, as a counted one
 * does: otherwise eight "hi"s reserved ~10 tokens each and all went out. An
 * embeddings request reserves its input, which it never did (it reserved 0).
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { completionText, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { until } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

async function setup(): Promise<{ client: OpenAI; upstream: RawUpstream; release: () => void }> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const upstream = await startRawUpstream(async (res, hit) => {
    await held;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (hit.body.input !== undefined) {
      const inputs = Array.isArray(hit.body.input) ? hit.body.input : [hit.body.input];
      const data = inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2] }));
      res.end(JSON.stringify({ object: 'list', data, model: 'e', usage: { prompt_tokens: 1000, total_tokens: 1000 } }));
      return;
    }
    res.end(completionText('m', 'hello', 8, 1));
  });
  const gw: TestGateway = await startGateway(
    {
      providers: [{ id: 'up', type: 'openai', baseUrl: upstream.url }],
      models: [
        { name: 'chat', deployments: [{ provider: 'up', model: 'm' }] },
        { name: 'embed', deployments: [{ provider: 'up', model: 'e' }] },
      ],
      keys: [{ id: 'team', key: '${TEAM_KEY}', tpm: 5000 }],
    },
    { env: { TEAM_KEY: 'sk-team-0123456789' } },
  );
  closers.push(
    () => upstream.close(),
    async () => {
      release();
      await gw.close(0);
    },
  );
  return { client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'sk-team-0123456789', maxRetries: 0 }), upstream, release };
}

/** Start `n` calls at once; once each is either held at the upstream or refused, let the upstream answer. */
async function burst(n: number, call: () => Promise<unknown>, upstream: RawUpstream, release: () => void): Promise<{ served: number; refused: number }> {
  let refused = 0;
  const calls = Array.from({ length: n }, () =>
    call().then(
      () => 'served',
      (e: unknown) => {
        if (!(e instanceof OpenAI.RateLimitError)) throw e;
        refused++;
        return 'refused';
      },
    ),
  );
  await until(() => upstream.hits.length + refused >= n, `each of ${n} calls held at the upstream or refused (${upstream.hits.length} held, ${refused} refused)`);
  release();
  const outcomes = await Promise.all(calls);
  return { served: outcomes.filter((o) => o === 'served').length, refused };
}

describe('a tpm limit against requests in flight', () => {
  it('a small chat request without max_tokens reserves its 1,024-token completion budget: five of eight go, the rest are refused', async () => {
    const { client, upstream, release } = await setup();
    const r = await burst(8, () => client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }), upstream, release);
    // ~1,033 tokens each against 5,000: admitted while the minute is below its tpm, so the fifth goes over by its own size.
    expect(r).toEqual({ served: 5, refused: 3 });
    expect(upstream.hits).toHaveLength(5);
  });

  it('an embeddings request reserves its input', async () => {
    const { client, upstream, release } = await setup();
    const input = 'word '.repeat(800); // 4,000 characters: ~1,000 tokens
    const r = await burst(8, () => client.embeddings.create({ model: 'embed', input }), upstream, release);
    expect(r).toEqual({ served: 5, refused: 3 });
    expect(upstream.hits).toHaveLength(5);
  });
});
