/**
 * When every candidate is out of local capacity: the request waits (bounded by
 * `throttleMaxWaitMs`) for whichever candidate frees up first, or is answered
 * at once with 503 and a Retry-After saying when that will be; and the waiting
 * room itself is bounded. Time is a manual VirtualClock, so "at once" means
 * "before the clock moved".
 *
 * Two simulated providers, each behind one alias, the second the first's
 * fallback: `slow` at rpm 6 (burst 6, then one every 10 s) and `fast` at
 * rpm 12 (burst 10, then one every 5 s). After 16 requests both are empty and
 * `fast` is the earlier to refill, 5 s away.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { GatewayError } from '../../src/core/errors.js';
import { createGateway, type ChatResponse, type Gateway } from '../../src/core/gateway.js';
import { DEFAULT_MAX_WAITERS } from '../../src/limits/index.js';
import { EventBus, type GatewayEventMap } from '../../src/observability/events.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const INSTANT = { latencyMs: 0, ttftMs: 0, tokensPerSecond: 1000 };
/** Requests both providers' bursts allow at t=0. */
const BURSTS = 6 + 10;
const FAST_REFILL_MS = 5_000;

function doc(throttleMaxWaitMs: number): Record<string, unknown> {
  return {
    resilience: { throttleMaxWaitMs, deadlineMs: 120_000 },
    providers: [
      { id: 'slow', type: 'simulated', rpm: 6, simulate: INSTANT },
      { id: 'fast', type: 'simulated', rpm: 12, simulate: INSTANT },
    ],
    models: [
      { name: 'chat', deployments: [{ provider: 'slow', model: 'slow-model' }], fallbacks: ['backup'] },
      { name: 'backup', deployments: [{ provider: 'fast', model: 'fast-model' }] },
    ],
  };
}

const REQUEST = { model: 'chat', messages: [{ role: 'user' as const, content: 'hi' }] };

function inProcess(throttleMaxWaitMs: number) {
  const clock = new VirtualClock();
  const bus = new EventBus();
  const throttles: GatewayEventMap['throttle'][] = [];
  bus.on('throttle', (e) => throttles.push(e));
  const gw = createGateway(parseConfig(doc(throttleMaxWaitMs), {}), { clock, bus });
  return { clock, gw, throttles };
}

async function drain(gw: Gateway, n: number): Promise<string[]> {
  const served: string[] = [];
  for (let i = 0; i < n; i++) served.push(((await gw.chat(REQUEST)) as ChatResponse).meta.deployment);
  return served;
}

/** Settles a promise into a state the test can poll without awaiting it. */
function track<T>(p: Promise<T>) {
  const s: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (v) => Object.assign(s, { done: true, value: v }),
    (e: unknown) => Object.assign(s, { done: true, error: e }),
  );
  return s;
}

describe('all candidates throttled', () => {
  it('waits for the earliest candidate to refill and is served by it', async () => {
    const { clock, gw, throttles } = inProcess(8_000);
    const served = await drain(gw, BURSTS);
    expect(served.filter((d) => d === 'slow/slow-model')).toHaveLength(6);
    expect(served.filter((d) => d === 'fast/fast-model')).toHaveLength(10);

    const t0 = clock.now();
    const waiting = track(gw.chat(REQUEST) as Promise<ChatResponse>);
    await clock.advance(FAST_REFILL_MS - 1);
    expect(waiting.done).toBe(false);
    await clock.advance(1);
    expect(waiting.error).toBeUndefined();
    expect(waiting.value?.meta.deployment).toBe('fast/fast-model');
    expect(clock.now() - t0).toBe(FAST_REFILL_MS);
    // Both were skipped as throttled, then the wait was granted on `fast` after 5 s.
    expect(throttles.filter((e) => e.outcome === 'skipped').slice(-2).map((e) => e.deployment)).toEqual(['slow/slow-model', 'fast/fast-model']);
    expect(throttles.at(-1)).toEqual({ deployment: 'fast/fast-model', waitedMs: FAST_REFILL_MS, outcome: 'acquired' });
    await gw.close();
  });

  it('is answered at once with 503 and Retry-After when the earliest refill is beyond throttleMaxWaitMs', async () => {
    const { clock, gw, throttles } = inProcess(2_000);
    await drain(gw, BURSTS);
    const t0 = clock.now();
    const err = await gw.chat(REQUEST).catch((e: unknown) => e);
    expect(clock.now()).toBe(t0); // no waiting out a wait that cannot succeed
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(503);
    expect((err as GatewayError).code).toBe('all_candidates_unavailable');
    // When the earlier of the two refills: `fast` in 5 s (not `slow`'s 10 s, not the 2 s budget).
    expect((err as GatewayError).retryAfterS).toBe(FAST_REFILL_MS / 1000);
    expect(throttles.at(-1)).toMatchObject({ outcome: 'beyond_budget', waitedMs: 0 });

    // Retry-After is honest: at that time the request is served.
    await clock.advance(FAST_REFILL_MS);
    expect(((await gw.chat(REQUEST)) as ChatResponse).meta.deployment).toBe('fast/fast-model');
    await gw.close();
  });

  it('past the waiter limit, a request is refused at once (503) instead of queueing', async () => {
    const { clock, gw, throttles } = inProcess(60_000);
    await drain(gw, BURSTS);
    const t0 = clock.now();
    const queued = Array.from({ length: DEFAULT_MAX_WAITERS }, () => track(gw.chat(REQUEST)));
    const overflow = await gw.chat(REQUEST).catch((e: unknown) => e);
    expect(clock.now()).toBe(t0);
    expect(queued.every((q) => !q.done)).toBe(true);
    expect(overflow).toBeInstanceOf(GatewayError);
    expect((overflow as GatewayError).status).toBe(503);
    expect((overflow as GatewayError).code).toBe('all_candidates_unavailable');
    expect((overflow as GatewayError).retryAfterS).toBe(FAST_REFILL_MS / 1000);
    expect(throttles.filter((e) => e.outcome === 'overflow')).toHaveLength(1);

    // The queue drains in order as capacity refills; whoever cannot be served in 60 s gets a 503.
    await clock.advance(61_000);
    expect(queued.every((q) => q.done)).toBe(true);
    const ok = queued.filter((q) => q.value !== undefined);
    // Within the minute only `fast`'s rolling window has room, for two more
    // (rpm 12 minus its burst of 10), at t=5 s and t=10 s: the first two to queue.
    expect(ok).toHaveLength(2);
    expect(queued[0]!.value).toBeDefined();
    expect(queued[1]!.value).toBeDefined();
    for (const q of queued.filter((q) => q.error !== undefined)) expect((q.error as GatewayError).status).toBe(503);
    await gw.close();
  });
});

describe('503 over the wire', () => {
  let gw: TestGateway | undefined;
  afterEach(async () => {
    await gw?.close(0);
    gw = undefined;
  });

  it('carries Retry-After in seconds and the all_candidates_unavailable code', async () => {
    const clock = new VirtualClock();
    gw = await startGateway(doc(2_000), { clock });
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
    for (let i = 0; i < BURSTS; i++) await client.chat.completions.create(REQUEST);
    const err = await client.chat.completions.create(REQUEST).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const api = err as InstanceType<typeof OpenAI.APIError>;
    expect(api.status).toBe(503);
    expect(api.code).toBe('all_candidates_unavailable');
    expect(api.headers?.get('retry-after')).toBe(String(FAST_REFILL_MS / 1000));
  });
});
