/**
 * Outage-and-recovery timelines on a virtual clock: minutes of simulated time
 * in milliseconds of real time, the same timeline on every run. The gateway
 * runs in-process over `simulated` providers whose fault rules are time
 * windows; the test sends one request every few virtual seconds and records
 * which deployment served it.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { createGateway, type ChatResponse, type ChatStreamResponse } from '../../src/core/gateway.js';
import { GatewayError } from '../../src/core/errors.js';
import { seededRandom } from '../../src/core/clock.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

type Fault = Record<string, unknown>;

const RESILIENCE = {
  requestTimeoutMs: 5_000,
  ttftTimeoutMs: 3_000,
  idleTimeoutMs: 3_000,
  deadlineMs: 60_000,
  maxRetries: 1,
  backoff: { baseMs: 100, maxMs: 1_000 },
  breaker: { failureThreshold: 3, recoveryMs: 30_000, halfOpenProbes: 1 },
  cooldownMs: 20_000,
};

function sim(faults: Fault[] = []) {
  return { latencyMs: 100, ttftMs: 50, tokensPerSecond: 200, faults };
}

function gateway(providers: { id: string; faults?: Fault[] }[], clock: VirtualClock) {
  const ids = providers.map((p) => p.id);
  const config = parseConfig({
    resilience: RESILIENCE,
    providers: providers.map((p) => ({ id: p.id, type: 'simulated', simulate: sim(p.faults) })),
    models: ids.map((id, i) => ({
      name: `tier-${id}`,
      deployments: [{ provider: id, model: `${id}-model` }],
      fallbacks: i + 1 < ids.length ? [`tier-${ids[i + 1]}`] : [],
    })),
  }, {});
  return createGateway(config, { clock, random: seededRandom(7) });
}

async function served(gw: ReturnType<typeof gateway>, model: string, stream: boolean): Promise<string> {
  const res = (await gw.chat({ model, stream, messages: [{ role: 'user', content: 'hi' }] })) as ChatResponse | ChatStreamResponse;
  if (!res.stream) return res.body.model;
  let text = '';
  let m = '';
  for await (const chunk of res) {
    text += chunk.choices[0]?.delta.content ?? '';
    m = chunk.model;
  }
  expect(text).toContain('Hello from');
  return m;
}

/** One request every `everyMs` from t=0 to `untilMs`; returns [offset, model] pairs. */
async function timeline(gw: ReturnType<typeof gateway>, clock: VirtualClock, model: string, stream: boolean, everyMs: number, untilMs: number) {
  const start = clock.now();
  const out: [number, string][] = [];
  while (clock.now() - start < untilMs) {
    const at = clock.now() - start;
    out.push([at, await served(gw, model, stream)]);
    const next = start + out.length * everyMs;
    if (next > clock.now()) await clock.advance(next - clock.now());
  }
  return out;
}

const between = (tl: [number, string][], from: number, to: number) => tl.filter(([t]) => t >= from && t < to).map(([, m]) => m);

const OUTAGES: [string, Fault][] = [
  ['429s', { kind: 'rate_limit' }],
  ['500s', { kind: 'status', status: 500 }],
  ['529s', { kind: 'status', status: 529 }],
  ['hangs (timeouts)', { kind: 'hang' }],
];

describe('primary down, then recovered', () => {
  for (const stream of [false, true]) {
    for (const [name, fault] of OUTAGES) {
      it(`${stream ? 'streaming' : 'buffered'}: ${name} from 60 s to 180 s — every request served, traffic returns to the primary`, async () => {
        const clock = new VirtualClock(undefined, true);
        const gw = gateway([{ id: 'p', faults: [{ ...fault, fromMs: 60_000, toMs: 180_000 }] }, { id: 's' }], clock);
        const tl = await timeline(gw, clock, 'tier-p', stream, 5_000, 300_000);
        expect(between(tl, 0, 60_000).every((m) => m === 'p-model')).toBe(true);
        // During the outage nothing fails: the secondary serves.
        expect(between(tl, 60_000, 180_000).every((m) => m === 's-model')).toBe(true);
        // Recovery is bounded by the breaker's recoveryMs / the cooldown, then the primary serves again.
        const after = between(tl, 180_000 + RESILIENCE.breaker.recoveryMs + 5_000, 300_000);
        expect(after.length).toBeGreaterThan(10);
        expect(after.every((m) => m === 'p-model')).toBe(true);
        await gw.close();
      });
    }
  }

  it('the breaker opens during a 500 outage, so the primary is not hammered', async () => {
    const clock = new VirtualClock(undefined, true);
    const gw = gateway([{ id: 'p', faults: [{ kind: 'status', status: 500, fromMs: 0, toMs: 120_000 }] }, { id: 's' }], clock);
    const events: string[] = [];
    gw.bus.on('breaker', (e) => events.push(`${e.from}->${e.to}`));
    const calls: number[] = [];
    gw.bus.on('attempt', (e) => {
      if (e.deployment === 'p/p-model' && e.trace.errorType !== 'circuit_open') calls.push(e.trace.status);
    });
    await timeline(gw, clock, 'tier-p', false, 1_000, 180_000);
    expect(events[0]).toBe('closed->open');
    expect(events).toContain('open->half_open');
    expect(events[events.length - 1]).toBe('half_open->closed');
    // 180 requests, but the primary saw only the trip, the failed probes, and the recovery traffic.
    expect(calls.filter((s) => s === 500).length).toBeLessThan(12);
    await gw.close();
  });
});

describe('cascades', () => {
  it('three tiers: the first two down in overlapping windows, each request served by the best healthy tier', async () => {
    const clock = new VirtualClock(undefined, true);
    const gw = gateway(
      [
        { id: 'a', faults: [{ kind: 'status', status: 503, fromMs: 10_000, toMs: 120_000 }] },
        { id: 'b', faults: [{ kind: 'rate_limit', fromMs: 30_000, toMs: 90_000 }] },
        { id: 'c' },
      ],
      clock,
    );
    const tl = await timeline(gw, clock, 'tier-a', false, 2_000, 240_000);
    expect(between(tl, 0, 10_000).every((m) => m === 'a-model')).toBe(true);
    expect(between(tl, 12_000, 30_000).every((m) => m === 'b-model')).toBe(true);
    expect(between(tl, 30_000, 90_000).every((m) => m === 'c-model')).toBe(true);
    // b is back after its window plus its cooldown; a after its window plus the breaker's recovery.
    expect(between(tl, 90_000 + RESILIENCE.cooldownMs + 2_000, 120_000).every((m) => m === 'b-model')).toBe(true);
    expect(between(tl, 120_000 + RESILIENCE.breaker.recoveryMs + 4_000, 240_000).every((m) => m === 'a-model')).toBe(true);
    await gw.close();
  });

  it('everything down: 503 all_candidates_unavailable with Retry-After = the earliest recovery', async () => {
    const clock = new VirtualClock(undefined, true);
    const gw = gateway(
      [
        { id: 'a', faults: [{ kind: 'rate_limit', retryAfterS: 40 }] },
        { id: 'b', faults: [{ kind: 'rate_limit', retryAfterS: 25 }] },
      ],
      clock,
    );
    const err = await served(gw, 'tier-a', false).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    const g = err as GatewayError;
    expect(g.status).toBe(503);
    expect(g.code).toBe('all_candidates_unavailable');
    expect(g.retryAfterS).toBe(25);
    // While both cool down, requests are refused at once without calling anyone.
    const before = clock.now();
    const again = (await served(gw, 'tier-a', false).catch((e: unknown) => e)) as GatewayError;
    expect(again.status).toBe(503);
    expect(clock.now()).toBe(before);
    expect(again.retryAfterS).toBeLessThanOrEqual(25);
    await gw.close();
  });

  it('the request deadline bounds the whole chain: 504 timeout', async () => {
    const clock = new VirtualClock(undefined, true);
    const config = parseConfig({
      resilience: { ...RESILIENCE, deadlineMs: 8_000, requestTimeoutMs: 5_000 },
      providers: [
        { id: 'a', type: 'simulated', simulate: sim([{ kind: 'hang' }]) },
        { id: 'b', type: 'simulated', simulate: sim([{ kind: 'hang' }]) },
      ],
      models: [{ name: 'm', deployments: [{ provider: 'a', model: 'x' }, { provider: 'b', model: 'y' }] }],
    }, {});
    const gw = createGateway(config, { clock, random: seededRandom(1) });
    const t0 = clock.now();
    const err = (await gw.chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)) as GatewayError;
    expect(err.status).toBe(504);
    expect(err.code).toBe('timeout');
    expect(clock.now() - t0).toBe(8_000);
    await gw.close();
  });
});
