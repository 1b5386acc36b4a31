/**
 * A rate limit's 429 for a prompt larger than the deployment's whole input-token limit, over
 * real sockets: the openai SDK → the gateway → a loopback Anthropic server that answers as
 * Anthropic does ("This request would exceed the rate limit for your organization (…) of 30,000
 * input tokens per minute", with its rate-limit headers and a Retry-After), and a loopback Gemini
 * server answering RESOURCE_EXHAUSTED with its QuotaFailure. Read as a rate limit, it cooled the
 * deployment down for every client and ended in a 503 the client would retry in vain. Read by size
 * (providers/refused-for-size.ts), it is that deployment's refusal: the next candidate serves, the
 * deployment keeps serving requests that fit, and with no other candidate the client is told (400)
 * rather than asked to retry.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type GatewayEventMap, type TraceRecord } from '../../src/observability/events.js';
import { startGateway } from '../helpers/gateway.js';
import { startAnthropicServer, type AnthropicServer, type RecordedRequest } from '../servers/anthropic-server.js';
import { googleError, startGeminiServer } from '../servers/gemini-server.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

type ApiError = InstanceType<typeof OpenAI.APIError>;

const MODEL = 'claude-sonnet-4-5';
const LIMIT = 30_000;
/** Well over the limit at 4 characters a token: ~56,000 tokens, as a code base pasted into a prompt. */
const HUGE = 'function add(a, b) { return a + b; } // sums two numbers\n'.repeat(4_000);
/** Over the limit, but not plainly (~33,000 tokens): left a rate limit. */
const NEAR = 'abcdefghij'.repeat((LIMIT * 4 + 12_000) / 10);

const LIMIT_MESSAGE =
  'This request would exceed the rate limit for your organization (0dccdde6-f924-4f1b-bb3b-92ef846e0a5b) of 30,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.';

/** Text the request's turns carry, as Anthropic would count it. */
function promptLength(r: RecordedRequest): number {
  const messages = (r.body?.messages ?? []) as { content: string | { type: string; text?: string }[] }[];
  let n = 0;
  for (const m of messages) n += typeof m.content === 'string' ? m.content.length : m.content.reduce((s, b) => s + (b.text?.length ?? 0), 0);
  return n;
}

/** Anthropic on a 30,000 input-tokens-a-minute tier: refuses any prompt over it (as it would, whatever is left of the minute). */
const startTier1 = () =>
  startAnthropicServer((r) =>
    promptLength(r) / 4 > LIMIT
      ? {
          kind: 'error',
          status: 429,
          type: 'rate_limit_error',
          message: LIMIT_MESSAGE,
          headers: { 'retry-after': '30', 'anthropic-ratelimit-input-tokens-limit': String(LIMIT), 'anthropic-ratelimit-input-tokens-remaining': String(LIMIT) },
        }
      : { text: 'Served by the tier-1 deployment.' },
  );

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

async function gatewayOver(tier1: AnthropicServer, larger?: AnthropicServer) {
  const providers: Record<string, unknown>[] = [{ id: 'tier1', type: 'anthropic', baseUrl: tier1.url, apiKey: '${K}' }];
  const models: Record<string, unknown>[] = [{ name: 'claude', deployments: [{ provider: 'tier1', model: MODEL }], ...(larger ? { fallbacks: ['claude-big'] } : {}) }];
  if (larger) {
    providers.push({ id: 'tier4', type: 'anthropic', baseUrl: larger.url, apiKey: '${K}' });
    models.push({ name: 'claude-big', deployments: [{ provider: 'tier4', model: MODEL }] });
  }
  const gw = await startGateway({ providers, models }, { env: { K: 'k' } });
  closers.push(() => gw.close(0));
  const traces: TraceRecord[] = [];
  gw.gateway.bus.on('request', (t) => traces.push(t));
  return { gw, traces, client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 }) };
}

async function upstreams(...starts: (() => Promise<AnthropicServer>)[]): Promise<AnthropicServer[]> {
  const servers = await Promise.all(starts.map((s) => s()));
  for (const s of servers) closers.push(() => s.close());
  return servers;
}

const ask = (client: OpenAI, content: string | OpenAI.ChatCompletionContentPart[]) =>
  client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content }] }).withResponse();

/** A stream read to its end (the SDK throws the gateway's error when it opens). */
async function askStreamed(client: OpenAI, content: string): Promise<void> {
  const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content }], stream: true });
  for await (const _ of stream);
}

describe("Anthropic's 429 for a prompt larger than the whole input-tokens-per-minute limit", () => {
  it('moves to a deployment with a larger limit, and the refusing one goes on serving prompts that fit', async () => {
    const [tier1, tier4] = await upstreams(startTier1, () => startAnthropicServer(() => ({ text: 'Served by the larger tier.' })));
    const { client, traces } = await gatewayOver(tier1!, tier4);

    const big = await ask(client, HUGE);
    expect(big.response.headers.get('x-switchyard-deployment')).toBe(`tier4/${MODEL}`);
    expect(big.response.headers.get('x-switchyard-fallback')).toBe('true');
    await expect.poll(() => traces.length).toBe(1);
    expect(traces[0]!.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
      ['tier1', 429, 'invalid_request'],
      ['tier4', 200, null],
    ]);

    // Not cooled down: the next request that fits is served where it was refused, at once.
    const small = await ask(client, 'What is 2 + 2?');
    expect(small.response.headers.get('x-switchyard-deployment')).toBe(`tier1/${MODEL}`);
    expect(small.response.headers.get('x-switchyard-attempts')).toBe('1');
    expect([tier1!.requests.length, tier4!.requests.length]).toEqual([2, 1]);

    // The limit is known now: the same prompt again goes to the larger tier without a round trip to the refusing one.
    const again = await ask(client, HUGE);
    expect(again.response.headers.get('x-switchyard-deployment')).toBe(`tier4/${MODEL}`);
    expect([tier1!.requests.length, tier4!.requests.length]).toEqual([2, 2]);
    await expect.poll(() => traces.length).toBe(3);
    expect(traces[2]!.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
      ['tier1', 0, 'skipped'],
      ['tier4', 200, null],
    ]);
    expect(traces[2]!.attempts[0]!.message).toBe('too large for its input-token limit');
  });

  it('with no other candidate, buffered or streamed: a 400 that says why, not a 503 to retry; the deployment stays open', async () => {
    const [tier1] = await upstreams(startTier1);
    const { client } = await gatewayOver(tier1!);

    for (const stream of [false, true]) {
      const err = await (stream ? askStreamed(client, HUGE) : ask(client, HUGE)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as ApiError).code).toBe('invalid_request');
      expect((err as ApiError).message).toMatch(/Request too large for claude-sonnet-4-5 on input tokens per minute: the prompt alone is about 5\d,\d{3} tokens, and this deployment's whole limit is 30,000\./);
      // The organization's id in Anthropic's words is not passed on.
      expect((err as ApiError).message).not.toContain('0dccdde6');
    }
    const small = await ask(client, 'What is 2 + 2?');
    expect(small.data.choices[0]!.message.content).toBe('Served by the tier-1 deployment.');
  });

  it('a prompt only a little over the limit, or one with a cache breakpoint (cached input does not count), stays a rate limit', async () => {
    for (const content of [NEAR, [{ type: 'text', text: HUGE, cache_control: { type: 'ephemeral' } }] as unknown as OpenAI.ChatCompletionContentPart[]]) {
      const [tier1] = await upstreams(startTier1);
      const { client, traces } = await gatewayOver(tier1!);
      const err = await ask(client, content).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as ApiError).status).toBe(503);
      expect((err as ApiError).code).toBe('all_candidates_unavailable');
      await expect.poll(() => traces.length).toBe(1);
      expect(traces[0]!.attempts[0]).toMatchObject({ status: 429, errorType: 'rate_limited' });
    }
  });
});

describe('a wait for capacity that lands on the deployment whose limit the prompt exceeds', () => {
  it('is that deployment refusing, and the wait goes on for the larger one: served, not a 400', async () => {
    const [tier1, tier4] = await upstreams(startTier1, () => startAnthropicServer(() => ({ text: 'Served by the larger tier.' })));
    const clock = new VirtualClock();
    const bus = new EventBus();
    const throttles: GatewayEventMap['throttle'][] = [];
    bus.on('throttle', (e) => throttles.push(e));
    // rpm 60 and 30: bursts of 10, then one a second on tier1 and one every 2 s on tier4.
    const gw = await startGateway(
      {
        resilience: { throttleMaxWaitMs: 5_000 },
        providers: [
          { id: 'tier1', type: 'anthropic', baseUrl: tier1!.url, apiKey: '${K}', rpm: 60 },
          { id: 'tier4', type: 'anthropic', baseUrl: tier4!.url, apiKey: '${K}', rpm: 30 },
        ],
        models: [
          { name: 'claude', deployments: [{ provider: 'tier1', model: MODEL }], fallbacks: ['big'] },
          { name: 'small', deployments: [{ provider: 'tier1', model: MODEL }] },
          { name: 'big', deployments: [{ provider: 'tier4', model: MODEL }] },
        ],
      },
      { env: { K: 'k' }, clock, bus },
    );
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
    const askFor = (model: string, content: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content }] }).withResponse();

    // Refused by tier1 (its limit learnt), served by tier4: one of each burst spent.
    expect((await askFor('claude', HUGE)).response.headers.get('x-switchyard-deployment')).toBe(`tier4/${MODEL}`);
    // The rest of both bursts, tier4's first: tier1 refills first (1 s), tier4 a second later.
    for (let i = 0; i < 9; i++) await askFor('big', 'hi');
    for (let i = 0; i < 9; i++) await askFor('small', 'hi');
    const sent = [tier1!.requests.length, tier4!.requests.length];

    let answer: Awaited<ReturnType<typeof askFor>> | undefined;
    let failure: unknown;
    void askFor('claude', HUGE).then(
      (r) => (answer = r),
      (e: unknown) => (failure = e),
    );
    // Both throttled: the request waits for the earlier, tier1, which refuses it without a call…
    await expect.poll(() => throttles.filter((e) => e.outcome === 'skipped').length).toBe(2);
    await clock.advance(1_000);
    await expect.poll(() => throttles.some((e) => e.outcome === 'acquired' && e.deployment === `tier1/${MODEL}`)).toBe(true);
    expect(failure).toBeUndefined();
    // …and then for tier4, which serves it.
    await clock.advance(1_000);
    await expect.poll(() => answer ?? failure).toBeDefined();
    expect(failure).toBeUndefined();
    expect(answer!.response.headers.get('x-switchyard-deployment')).toBe(`tier4/${MODEL}`);
    expect([tier1!.requests.length, tier4!.requests.length]).toEqual([sent[0], sent[1]! + 1]);
  });
});

describe("Gemini's RESOURCE_EXHAUSTED for a prompt larger than its whole input-token quota", () => {
  const quotaFailure = (limit: number) =>
    googleError(
      429,
      `You exceeded your current quota, please check your plan and billing details.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: ${limit}, model: gemini-2.5-flash\nPlease retry in 45.5s.`,
      [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            { quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_input_token_count', quotaId: 'GenerateContentInputTokensPerModelPerMinute-FreeTier', quotaDimensions: { model: 'gemini-2.5-flash', location: 'global' }, quotaValue: String(limit) },
          ],
        },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '45s' },
      ],
    );

  async function gatewayOverGemini() {
    const gemini = await startGeminiServer();
    closers.push(() => gemini.close());
    // Two providers on one scripted server: the replies go to the requests in the order they come.
    const gw = await startGateway(
      {
        providers: [
          { id: 'free', type: 'gemini', baseUrl: gemini.url, apiKey: '${K}' },
          { id: 'paid', type: 'gemini', baseUrl: gemini.url, apiKey: '${K}' },
        ],
        models: [
          { name: 'claude', deployments: [{ provider: 'free', model: 'gemini-2.5-flash' }], fallbacks: ['paid'] },
          { name: 'paid', deployments: [{ provider: 'paid', model: 'gemini-2.5-flash' }] },
        ],
      },
      { env: { K: 'k' } },
    );
    closers.push(() => gw.close(0));
    return { gemini, client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 }) };
  }

  it('a prompt plainly over the quota moves to the next candidate, and the free tier goes on serving prompts that fit', async () => {
    const { gemini, client } = await gatewayOverGemini();
    // ~56,000 tokens against a quota of 32,000.
    gemini.enqueue({ kind: 'error', status: 429, body: quotaFailure(32_000) }, { kind: 'text', text: 'Served by the paid tier.' }, { kind: 'text', text: 'Served by the free tier.' });
    const big = await ask(client, HUGE);
    expect(big.response.headers.get('x-switchyard-deployment')).toBe('paid/gemini-2.5-flash');
    const small = await ask(client, 'What is 2 + 2?');
    expect(small.response.headers.get('x-switchyard-deployment')).toBe('free/gemini-2.5-flash');
    expect(small.data.choices[0]!.message.content).toBe('Served by the free tier.');
    // Streamed, the prompt is passed over on the free tier without a call (its quota is known now).
    const calls = gemini.requests.length;
    gemini.enqueue({ kind: 'text', text: ['Streamed by ', 'the paid tier.'] });
    const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: HUGE }], stream: true }).withResponse();
    expect(stream.response.headers.get('x-switchyard-deployment')).toBe('paid/gemini-2.5-flash');
    let text = '';
    for await (const c of stream.data) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Streamed by the paid tier.');
    expect(gemini.requests.length).toBe(calls + 1);
  });

  it('a prompt under the quota is an ordinary rate limit: the free tier cools down and the next request goes to the paid one', async () => {
    const { gemini, client } = await gatewayOverGemini();
    gemini.enqueue({ kind: 'error', status: 429, body: quotaFailure(250_000) }, { kind: 'text', text: 'Served by the paid tier.' }, { kind: 'text', text: 'Served by the paid tier again.' });
    const big = await ask(client, HUGE);
    expect(big.response.headers.get('x-switchyard-deployment')).toBe('paid/gemini-2.5-flash');
    const small = await ask(client, 'What is 2 + 2?');
    expect(small.response.headers.get('x-switchyard-deployment')).toBe('paid/gemini-2.5-flash');
  });
});
