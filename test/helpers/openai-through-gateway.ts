/**
 * The end-to-end setup the provider gateway tests share: a loopback upstream,
 * a real gateway in front of it, and the official `openai` client pointed at
 * the gateway. Registers vitest's beforeAll/afterAll; the returned object is
 * filled in by beforeAll, so tests read its fields, not copies of them.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import { startGateway, type TestGateway } from './gateway.js';

type GatewayOptions = NonNullable<Parameters<typeof startGateway>[1]>;

export interface OpenAIThroughGateway<U> {
  upstream: U;
  gateway: TestGateway;
  client: OpenAI;
}

export interface ThroughGatewaySetup<U> {
  upstream: () => Promise<U>;
  /** The gateway's config document, given the upstream's origin. */
  config: (upstreamUrl: string) => Record<string, unknown>;
  options?: GatewayOptions;
  /** The key the client sends (the gateways under test configure none). */
  clientApiKey?: string;
}

export function openaiThroughGateway<U extends { url: string; close(): Promise<void> }>(setup: ThroughGatewaySetup<U>): OpenAIThroughGateway<U> {
  const t = {} as OpenAIThroughGateway<U>;
  beforeAll(async () => {
    t.upstream = await setup.upstream();
    t.gateway = await startGateway(setup.config(t.upstream.url), setup.options);
    t.client = new OpenAI({ baseURL: t.gateway.baseURL, apiKey: setup.clientApiKey ?? 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await t.gateway?.close();
    await t.upstream?.close();
  });
  return t;
}
