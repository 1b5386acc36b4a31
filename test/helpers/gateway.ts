/**
 * A real listening gateway for integration tests: give it a config document
 * (as a user would write it; parsed by the real schema) and get its URL.
 * Logs are silent unless a logger is passed.
 */
import { parseConfig } from '../../src/config/parse.js';
import type { Config } from '../../src/config/types.js';
import { startSwitchyard, type RunningSwitchyard, type StartOptions } from '../../src/core/start.js';
import { createSilentLogger } from '../../src/observability/logger.js';

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

/** Shorthand: one `openai`-type provider at `url` (an OpenAI-compatible loopback server) behind alias `model`. */
export function openaiProvider(id: string, url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, type: 'openai', baseUrl: url, ...extra };
}
