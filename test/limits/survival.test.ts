/**
 * Surviving a free tier, end to end over real loopback sockets: the official
 * `openai` client (no retries of its own) → the gateway → an OpenAI-compatible
 * fault server that allows 30 requests per rolling minute, with a second
 * fault server as the fallback. 120 requests at concurrency 8 must all
 * succeed, the free tier must serve about its limit, the rest spill to the
 * fallback, and the free tier must almost never have to say 429.
 *
 * The timeline is a minute and more, so everyone (gateway, pacer, both
 * upstreams) runs on one VirtualClock in auto mode. A heartbeat timer keeps
 * virtual time moving in small steps while bytes are on the wire: without it,
 * an idle moment during a socket round trip would jump straight to the next
 * pending timer, which can be an attempt timeout.
 */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { openaiProvider, startGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const FREE_TIER_RPM = 30;
const REQUESTS = 120;
const CONCURRENCY = 8;
/** Upstream latency: 120 requests / 8 in flight × 4 s ≈ one virtual minute. */
const LATENCY_MS = 4_000;
/** Virtual time per idle turn of the event loop while requests are in flight. */
const TICK_MS = 20;

/** What one upstream decided, seen from its own side. */
interface UpstreamLog {
  /** Virtual times of the requests it served (admitted by its free tier). */
  served: number[];
  /** Requests it answered with 429. */
  rateLimited: number;
}

function watch(server: FaultServer, clock: VirtualClock): UpstreamLog {
  const log: UpstreamLog = { served: [], rateLimited: 0 };
  const decide = server.script.decide.bind(server.script);
  server.script.decide = () => {
    const plan = decide();
    if (plan.kind === 'rate_limit') log.rateLimited++;
    else log.served.push(clock.now());
    return plan;
  };
  return log;
}

/** Most requests inside any 60 s window (the free tier's own rule). */
function maxPerMinute(times: readonly number[]): number {
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 60_000) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

interface Outcome {
  primary: UpstreamLog;
  fallback: UpstreamLog;
  /** Client-visible failures by HTTP status (0: no status). */
  errors: Map<number, number>;
  /** Successful answers by `x-switchyard-deployment`. */
  servedBy: Map<string, number>;
  virtualMs: number;
}

async function run(primaryLimits: Record<string, unknown>): Promise<Outcome> {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
  const primaryServer = await startFaultServer({ clock, providerId: 'free', simulate: { rpmLimit: FREE_TIER_RPM, latencyMs: LATENCY_MS } });
  const fallbackServer = await startFaultServer({ clock, providerId: 'paid', simulate: { latencyMs: LATENCY_MS } });
  const primary = watch(primaryServer, clock);
  const fallback = watch(fallbackServer, clock);
  const gw = await startGateway(
    {
      resilience: {
        // Virtual time runs ahead of the sockets; no timeout must fire on a healthy request.
        requestTimeoutMs: 600_000,
        deadlineMs: 600_000,
      },
      providers: [openaiProvider('free', primaryServer.url, primaryLimits), openaiProvider('paid', fallbackServer.url)],
      models: [
        { name: 'chat', deployments: [{ provider: 'free', model: 'free-model' }], fallbacks: ['paid'] },
        { name: 'paid', deployments: [{ provider: 'paid', model: 'paid-model' }] },
      ],
    },
    { clock },
  );
  let beating = true;
  const heartbeat = (async () => {
    while (beating) await clock.sleep(TICK_MS);
  })();
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
  const errors = new Map<number, number>();
  const servedBy = new Map<string, number>();
  const start = clock.now();
  let next = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      try {
        const { response } = await client.chat.completions
          .create({ model: 'chat', messages: [{ role: 'user', content: 'hello' }] })
          .withResponse();
        const d = response.headers.get('x-switchyard-deployment') ?? '?';
        servedBy.set(d, (servedBy.get(d) ?? 0) + 1);
      } catch (err) {
        const status = err instanceof OpenAI.APIError ? (err.status ?? 0) : 0;
        errors.set(status, (errors.get(status) ?? 0) + 1);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return { primary, fallback, errors, servedBy, virtualMs: clock.now() - start };
  } finally {
    beating = false;
    await heartbeat;
    await gw.close(0);
    await primaryServer.close();
    await fallbackServer.close();
  }
}

function expectSurvived(o: Outcome, max429: number): void {
  expect(Object.fromEntries(o.errors)).toEqual({});
  expect(o.primary.rateLimited).toBeLessThanOrEqual(max429);
  expect(o.fallback.rateLimited).toBe(0);
  // Every request was answered once, by one of the two.
  expect(o.primary.served.length + o.fallback.served.length).toBe(REQUESTS);
  expect(o.servedBy.get('free/free-model') ?? 0).toBe(o.primary.served.length);
  expect(o.servedBy.get('paid/paid-model') ?? 0).toBe(o.fallback.served.length);
  // The free tier was used up to its limit, not abandoned at the first sign of pressure...
  expect(o.primary.served.length).toBeGreaterThanOrEqual(FREE_TIER_RPM - 5);
  expect(o.primary.served.length).toBeLessThanOrEqual(FREE_TIER_RPM * Math.ceil(o.virtualMs / 60_000));
  expect(maxPerMinute(o.primary.served)).toBeLessThanOrEqual(FREE_TIER_RPM);
  // ...and everything beyond it spilled to the fallback.
  expect(o.fallback.served.length).toBeGreaterThanOrEqual(REQUESTS - FREE_TIER_RPM * Math.ceil(o.virtualMs / 60_000));
}

describe('the loopback free tier', () => {
  it("reports its state in OpenAI's x-ratelimit-*-requests headers, on 200s and on its 429", async () => {
    const clock = new VirtualClock();
    const server = await startFaultServer({ clock, simulate: { rpmLimit: 2 } });
    const post = () =>
      fetch(`${server.url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    try {
      const first = await post();
      await clock.advance(10_000);
      const second = await post();
      const third = await post();
      const seen = [first, second, third].map((r) => [
        r.status,
        r.headers.get('x-ratelimit-limit-requests'),
        r.headers.get('x-ratelimit-remaining-requests'),
        r.headers.get('x-ratelimit-reset-requests'),
        r.headers.get('retry-after'),
      ]);
      // Reset: until the newest admitted request leaves the minute. Retry-After: until the oldest does.
      expect(seen).toEqual([
        [200, '2', '1', '60000ms', null],
        [200, '2', '0', '60000ms', null],
        [429, '2', '0', '60000ms', '50'],
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('120 requests at concurrency 8 against a free tier of 30 rpm, with a fallback', () => {
  it('with the rpm configured: zero client errors, zero upstream 429s', async () => {
    const o = await run({ rpm: FREE_TIER_RPM });
    expectSurvived(o, 0);
  });

  it('with the rpm configured a little under the limit: the same, with headroom', async () => {
    const o = await run({ rpm: 28 });
    expectSurvived(o, 0);
    expect(maxPerMinute(o.primary.served)).toBeLessThanOrEqual(28);
  });

  it('with no rpm configured (learned from x-ratelimit-* headers and 429s): zero client errors, at most a handful of 429s', async () => {
    const o = await run({});
    expectSurvived(o, 5);
  });
});
