/**
 * Hand-built providers and deployments for unit tests of the code that takes a
 * Deployment (pacing, gates): no config parsing, only the fields those read.
 */
import type { ProviderConfig } from '../../src/config/types.js';
import { makeDeployment, type Deployment } from '../../src/routing/deployment.js';

const TIMEOUTS = { requestTimeoutMs: 30_000, ttftTimeoutMs: 20_000, idleTimeoutMs: 15_000 };

export function provider(id: string, limits: { rpm?: number; tpm?: number } = {}): ProviderConfig {
  return { id, type: 'simulated', baseUrl: 'http://127.0.0.1:1', locality: 'local', headers: {}, maxConnections: 8, ...limits };
}

export function deployment(p: ProviderConfig, model: string, limits: { rpm?: number; tpm?: number } = {}): Deployment {
  return makeDeployment(p, { model, ...limits }, TIMEOUTS);
}
