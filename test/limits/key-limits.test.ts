/**
 * Client-key limits over real sockets: the official `openai` client with a
 * key of rpm 3 → the gateway → a loopback upstream. The fourth request in the
 * minute is the one case a client sees 429 (`rate_limited`, Retry-After), it
 * never reaches the upstream, and other keys are not affected. Time is a
 * manual VirtualClock so "the minute" can pass.
 */
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { openaiProvider, startGateway, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';
import { startRawUpstream } from '../helpers/raw-upstream.js';

let upstream: FaultServer;
let gw: TestGateway;
let clock: VirtualClock;

beforeEach(async () => {
  clock = new VirtualClock();
  upstream = await startFaultServer({ clock });
  gw = await startGateway(
    {
      providers: [openaiProvider('up', upstream.url)],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'up-model' }] }],
      keys: [
        { id: 'small', key: '${SMALL_KEY}', rpm: 3 },
        { id: 'other', key: '${OTHER_KEY}' },
        { id: 'tokens', key: '${TOKENS_KEY}', tpm: 100 },
      ],
    },
    { clock, env: { SMALL_KEY: 'sk-small-0123456789', OTHER_KEY: 'sk-other-0123456789', TOKENS_KEY: 'sk-tokens-0123456789' } },
  );
});

afterEach(async () => {
  await gw?.close(0);
  await upstream.close();
});

const client = (apiKey: string) => new OpenAI({ baseURL: gw.baseURL, apiKey, maxRetries: 0 });
const ask = (c: OpenAI) => c.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });

describe('a client key over its rpm', () => {
  it('gets 429 rate_limited with Retry-After, and the upstream never sees the request', async () => {
    const small = client('sk-small-0123456789');
    for (let i = 0; i < 3; i++) await ask(small);
    expect(upstream.requests).toHaveLength(3);

    await clock.advance(10_000);
    const err = await ask(small).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const api = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(api.status).toBe(429);
    expect(api.code).toBe('rate_limited');
    expect(api.type).toBe('rate_limit_error');
    expect(api.message).not.toContain('sk-small');
    // The three requests at t=0 leave the rolling minute at t=61 s (whole seconds, rounded up): 51 s from now.
    expect(api.headers?.get('retry-after')).toBe('51');
    expect(upstream.requests).toHaveLength(3);

    // Another key is unaffected.
    await ask(client('sk-other-0123456789'));
    expect(upstream.requests).toHaveLength(4);

    // Just before Retry-After it is still refused; at it, served.
    await clock.advance(50_000);
    await expect(ask(small)).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    await clock.advance(1_000);
    await expect(ask(small)).resolves.toMatchObject({ object: 'chat.completion' });
  });
});

describe('a client key over its tpm', () => {
  it('is served while its minute has room, though each request reserves more than the whole tpm, then gets 429', async () => {
    const tokens = client('sk-tokens-0123456789');
    // No max_tokens: each request reserves its prompt plus a 1,024-token completion budget,
    // ten times this key's tpm, and its answer then reports what it really used.
    let used = 0;
    let served = 0;
    for (;;) {
      const r = await ask(tokens).catch((e: unknown) => e);
      if (r instanceof OpenAI.RateLimitError) {
        expect(r.code).toBe('rate_limited');
        break;
      }
      used += (r as OpenAI.ChatCompletion).usage!.total_tokens;
      served++;
      expect(served).toBeLessThan(100);
    }
    // Refused only once what was used reached the tpm.
    expect(served).toBeGreaterThan(1);
    expect(used).toBeGreaterThanOrEqual(100);
    expect(used - (used / served)).toBeLessThan(100);
    expect(upstream.requests).toHaveLength(served);
    // The minute passes: served again.
    await clock.advance(61_000);
    await expect(ask(tokens)).resolves.toMatchObject({ object: 'chat.completion' });
  });
});

describe('a client key whose requests fail upstream', () => {
  it('is not charged tokens for answers it never got: failures count as requests, not as their estimate', async () => {
    const down = await startRawUpstream((res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"unavailable","type":"server_error"}}');
    });
    const g = await startGateway(
      {
        resilience: { maxRetries: 0 },
        providers: [openaiProvider('down', down.url), openaiProvider('up', upstream.url)],
        models: [
          { name: 'broken', deployments: [{ provider: 'down', model: 'd' }] },
          { name: 'chat', deployments: [{ provider: 'up', model: 'up-model' }] },
        ],
        keys: [{ id: 'tokens', key: '${TOKENS_KEY}', tpm: 500, rpm: 5 }],
      },
      { clock, env: { TOKENS_KEY: 'sk-tokens-0123456789' } },
    );
    try {
      const c = new OpenAI({ baseURL: g.baseURL, apiKey: 'sk-tokens-0123456789', maxRetries: 0 });
      // Each reserves its prompt and a 1,024-token budget, twice the tpm: kept, the second was a 429.
      for (let i = 0; i < 3; i++) {
        const err = await c.chat.completions.create({ model: 'broken', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(OpenAI.APIError);
        expect((err as InstanceType<typeof OpenAI.APIError>).status).not.toBe(429);
      }
      expect(down.hits).toHaveLength(3);
      await expect(c.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] })).resolves.toMatchObject({ object: 'chat.completion' });
      // They were requests all the same: the rpm counts them (five in the minute; the tokens used are far below 500).
      await c.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined);
      const over = await c.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(over).toBeInstanceOf(OpenAI.RateLimitError);
    } finally {
      await g.close(0);
      await down.close();
    }
  });

  it('is charged the estimate of a request that may have run upstream: abandoned while the call was out', async () => {
    // The upstream takes the request and never answers: the client gives up.
    const held = await startRawUpstream(() => new Promise<void>(() => {}));
    const g = await startGateway(
      {
        resilience: { maxRetries: 0 },
        providers: [openaiProvider('held', held.url)],
        models: [{ name: 'slow', deployments: [{ provider: 'held', model: 'h' }] }],
        keys: [{ id: 'tokens', key: '${TOKENS_KEY}', tpm: 500 }],
      },
      { clock, env: { TOKENS_KEY: 'sk-tokens-0123456789' } },
    );
    try {
      const c = new OpenAI({ baseURL: g.baseURL, apiKey: 'sk-tokens-0123456789', maxRetries: 0 });
      const gone = new AbortController();
      const first = c.chat.completions.create({ model: 'slow', messages: [{ role: 'user', content: 'hi' }] }, { signal: gone.signal }).catch((e: unknown) => e);
      await expect.poll(() => held.hits.length).toBe(1);
      gone.abort();
      await first;
      // Finished (traced as the client's 499): no longer in flight, its reservation settled.
      await expect.poll(() => g.observability.traces.query({ limit: 5 }).map((t) => t.status)).toEqual([499]);
      // The upstream may have generated and billed it: its estimate (twice the tpm) stays in the minute.
      const next = await c.chat.completions.create({ model: 'slow', messages: [{ role: 'user', content: 'hi' }] }, { timeout: 2000 }).catch((e: unknown) => e);
      expect(next).toBeInstanceOf(OpenAI.RateLimitError);
      expect(held.hits).toHaveLength(1);
    } finally {
      await g.close(0);
      await held.close();
    }
  });

  it('is not charged for a request no upstream received: every candidate refused the connection', async () => {
    // A port that was listening and is closed now: the connection is refused, nothing was sent.
    const gone = await startRawUpstream(() => undefined);
    const url = gone.url;
    await gone.close();
    const g = await startGateway(
      {
        resilience: { maxRetries: 0 },
        providers: [openaiProvider('gone', url)],
        models: [{ name: 'chat', deployments: [{ provider: 'gone', model: 'g' }] }],
        keys: [{ id: 'one', key: '${ONE_KEY}', rpm: 1 }],
      },
      { clock, env: { ONE_KEY: 'sk-one-0123456789' } },
    );
    try {
      const c = new OpenAI({ baseURL: g.baseURL, apiKey: 'sk-one-0123456789', maxRetries: 0 });
      for (let i = 0; i < 3; i++) {
        const err = await c.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
        // 503 each time (an attempt was tried), never the key's 429: no request reached an upstream.
        expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
      }
    } finally {
      await g.close(0);
    }
  });
});
