/**
 * A real listening gateway for integration tests: give it a config document
 * (as a user would write it; parsed by the real schema) and get its URL.
 * Logs are silent unless a logger is passed.
 */
import { afterEach } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import type { Config } from '../../src/config/types.js';
import { startSwitchyard, type RunningSwitchyard, type StartOptions } from '../../src/core/start.js';
import { EventBus, type RefusedEvent } from '../../src/observability/events.js';
import { createSilentLogger } from '../../src/observability/logger.js';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import type { Clock } from '../../src/core/clock.js';

export interface TestGateway extends RunningSwitchyard {
  /** Base URL for OpenAI SDKs: `http://127.0.0.1:PORT/v1`. */
  baseURL: string;
  config: Config;
}

export async function startGateway(doc: Record<string, unknown>, opts: StartOptions & { env?: Record<string, string> } = {}): Promise<TestGateway> {
  const config = parseConfig({ server: { host: '127.0.0.1', port: 0 }, ...doc }, { ...opts.env });
  const running = await startSwitchyard(config, {
    port: 0,
    host: '127.0.0.1',
    ...opts,
    observability: { logger: createSilentLogger(), ...opts.observability },
  });
  return Object.assign(running, { baseURL: `${running.url}/v1`, config });
}

/**
 * Alias `chat` over one deployment `up/m` of an `openai`-type provider at `url` (a
 * loopback upstream). `deployment` adds to or replaces the deployment's fields (`model`,
 * `capabilities`, `price`…), `doc` the rest of the config (`resilience`…).
 */
export function startChatOver(
  url: string,
  doc: Record<string, unknown> = {},
  deployment: Record<string, unknown> = {},
  opts?: Parameters<typeof startGateway>[1],
): Promise<TestGateway> {
  return startGateway(
    {
      providers: [{ id: 'up', type: 'openai', baseUrl: url }],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm', ...deployment }] }],
      ...doc,
    },
    opts,
  );
}

/** startChatOver, with every `refused` event (a refusal at the door) pushed into `refused`. */
export function startChatCountingRefusals(url: string, doc: Record<string, unknown>, refused: RefusedEvent[]): Promise<TestGateway> {
  const bus = new EventBus();
  bus.on('refused', (e) => refused.push(e));
  return startChatOver(url, doc, {}, { bus });
}

/**
 * Config: alias `chat` over `primary/<p>` with the fallback alias `backup` over
 * `secondary/<s>`, two `openai`-type loopback upstreams; `resilience` as given.
 */
export function fallbackPair(primaryUrl: string, secondaryUrl: string, resilience: Record<string, unknown> = {}, models = { p: 'p1', s: 's1' }) {
  return {
    resilience,
    providers: [openaiProvider('primary', primaryUrl), openaiProvider('secondary', secondaryUrl)],
    models: pairModels('primary', models.p, 'secondary', models.s),
  };
}

/**
 * As fallbackPair, for two loopback servers of a native `type`: `chat` over `primary`, the
 * fallback alias `backup` over `secondary`. Their key is `${UPSTREAM_KEY}`: start the gateway
 * with it in `env`.
 */
export function nativeFallbackPair(type: string, primary: PairMember, secondary: PairMember, resilience: Record<string, unknown>) {
  return {
    resilience,
    providers: [primary, secondary].map((m) => ({ id: m.id, type, baseUrl: m.url, apiKey: '${UPSTREAM_KEY}' })),
    models: pairModels(primary.id, primary.model, secondary.id, secondary.model),
  };
}

/**
 * For a file's `beforeAll`: two loopback servers from `start` behind nativeFallbackPair (no
 * retries, backoff 1 ms, a breaker that does not open), the gateway over them; `close()` stops all three.
 */
export async function startNativeFallbackPair<S extends { url: string; close(): Promise<void> }>(
  start: () => Promise<S>,
  type: string,
  primary: Omit<PairMember, 'url'>,
  secondary: Omit<PairMember, 'url'>,
): Promise<{ primary: S; secondary: S; gw: TestGateway; close(): Promise<void> }> {
  const p = await start();
  const s = await start();
  const resilience = { maxRetries: 0, backoff: { baseMs: 1, maxMs: 1 }, breaker: { failureThreshold: 100 } };
  const gw = await startGateway(nativeFallbackPair(type, { ...primary, url: p.url }, { ...secondary, url: s.url }, resilience), { env: { UPSTREAM_KEY: 'k' } });
  return {
    primary: p,
    secondary: s,
    gw,
    close: async () => {
      await gw.close();
      await p.close();
      await s.close();
    },
  };
}

function pairModels(p: string, pModel: string, s: string, sModel: string) {
  return [
    { name: 'chat', deployments: [{ provider: p, model: pModel }], fallbacks: ['backup'] },
    { name: 'backup', deployments: [{ provider: s, model: sModel }] },
  ];
}

/**
 * For a file's `beforeAll`: a gateway on `clock` over one loopback fault server (provider
 * `up`, openai-type) serving `models`, with `resilience`; `close()` stops both.
 */
export async function startOverFaultServer(
  models: Record<string, unknown>[],
  resilience: Record<string, unknown>,
  clock: Clock,
): Promise<{ gw: TestGateway; upstream: FaultServer; close(): Promise<void> }> {
  const upstream = await startFaultServer();
  const gw = await startGateway({ resilience, providers: [openaiProvider('up', upstream.url)], models }, { clock });
  return {
    gw,
    upstream,
    close: async () => {
      await gw.close(0);
      await upstream.close();
    },
  };
}

/** Shorthand: one `openai`-type provider at `url` (an OpenAI-compatible loopback server) behind alias `model`. */
export function openaiProvider(id: string, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type: 'openai', baseUrl: url, ...extra };
}

/** One `openai` deployment of a cost pair: provider id, its base URL, the upstream model. */
export interface PairMember {
  id: string;
  url: string;
  model: string;
}

/**
 * Alias `chat` over two `openai` deployments tried cheapest first (`cost`:
 * `first` at 1/1 USD per million tokens, `second` at 2/2), no retries: a
 * failure of the first fails over to the second at once.
 */
export function startCostPair(first: PairMember, second: PairMember): Promise<TestGateway> {
  return startGateway({
    resilience: { maxRetries: 0, backoff: { baseMs: 1, maxMs: 1 } },
    providers: [
      { id: first.id, type: 'openai', baseUrl: first.url },
      { id: second.id, type: 'openai', baseUrl: second.url },
    ],
    models: [
      {
        name: 'chat',
        strategy: 'cost',
        deployments: [
          { provider: first.id, model: first.model, price: { input: 1, output: 1 } },
          { provider: second.id, model: second.model, price: { input: 2, output: 2 } },
        ],
      },
    ],
  });
}

/** Anything a test starts and must stop: a gateway (closed without grace), a loopback upstream. */
interface Closable {
  close(graceMs?: number): Promise<void>;
}

/**
 * After each test, closes what `started` returns (a gateway first, then its upstreams; any may
 * be absent), then calls `forget` so the next test starts from nothing.
 */
export function closeAfterEach(started: () => (Closable | undefined)[], forget: () => void): void {
  afterEach(async () => {
    for (const c of started()) await c?.close(0);
    forget();
  });
}
