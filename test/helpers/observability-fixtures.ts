/**
 * Hand-built configs and trace records for observability tests (which must
 * not depend on the config parser). Only the fields observability reads are
 * meaningful; the rest are plausible defaults.
 */
import type { Config, DeploymentConfig, ModelConfig, ProviderConfig } from '../../src/config/types.js';
import type { AttemptTrace, TraceRecord } from '../../src/observability/events.js';

function provider(id: string, type: ProviderConfig['type'] = 'simulated'): ProviderConfig {
  return { id, type, baseUrl: 'simulated://local', locality: 'external', headers: {}, maxConnections: 8 };
}

function deployment(p: string, model: string, extra: Partial<DeploymentConfig> = {}): DeploymentConfig {
  return { provider: p, model, weight: 1, capabilities: [], ...extra };
}

function alias(name: string, deployments: DeploymentConfig[], fallbacks: string[] = []): ModelConfig {
  return { name, strategy: 'weighted', deployments, fallbacks, contentPolicyFallbacks: [] };
}

/** Providers `openai`, `anthropic`, `local`; aliases `fast` (2 deployments) and `smart` (1); auto tiers. */
export function testConfig(traces: Partial<Config['traces']> = {}): Config {
  return {
    server: { host: '127.0.0.1', port: 0, maxBodyBytes: 1 << 20, shutdownGraceMs: 1000, cors: { origins: [] } },
    resilience: {
      requestTimeoutMs: 30_000,
      deadlineMs: 120_000,
      ttftTimeoutMs: 20_000,
      idleTimeoutMs: 15_000,
      streamResume: true,
      maxRetries: 2,
      backoff: { baseMs: 200, maxMs: 5000 },
      breaker: { failureThreshold: 5, recoveryMs: 30_000, halfOpenProbes: 1, windowMs: 60_000, failureRate: 0.5, minRequests: 20 },
      cooldownMs: 60_000,
      throttleMaxWaitMs: 2000,
      maxRetryAfterWaitMs: 5000,
    },
    limits: { defaultRpm: null },
    state: { backend: 'memory', keyPrefix: 'switchyard:' },
    traces: { store: 'memory', capacity: 100, path: ':memory:', maxAgeMs: 3_600_000, ...traces },
    privacy: { defaultDataClass: 'internal' },
    providers: [provider('openai', 'openai'), provider('anthropic', 'anthropic'), provider('local', 'ollama')],
    models: [
      alias(
        'fast',
        [
          deployment('openai', 'gpt-4o-mini', { price: { input: 0.15, output: 0.6 } }),
          deployment('anthropic', 'claude-haiku', { price: { input: 0.8, output: 4 } }),
        ],
        ['smart'],
      ),
      alias('smart', [deployment('local', 'llama3')]),
    ],
    auto: { tiers: ['fast', 'smart'] },
    keys: [],
  };
}

export function attempt(a: Partial<AttemptTrace> = {}): AttemptTrace {
  return { provider: 'openai', model: 'gpt-4o-mini', status: 200, errorType: null, latencyMs: 120, ttftMs: null, ...a };
}

let seq = 0;

/** A successful buffered chat request served by openai/gpt-4o-mini, overridable field by field. */
export function trace(t: Partial<TraceRecord> = {}): TraceRecord {
  seq++;
  return {
    id: `req-${seq}`,
    startedAt: new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString(),
    durationMs: 150,
    keyId: 'team-a',
    model: 'fast',
    routedProvider: 'openai',
    routedModel: 'gpt-4o-mini',
    deployment: 'openai/gpt-4o-mini',
    selection: 'weighted',
    fallbackUsed: false,
    retryCount: 0,
    attempts: [attempt()],
    stream: false,
    status: 200,
    errorCode: null,
    usage: { promptTokens: 10, completionTokens: 5 },
    costUsd: 0.0000045,
    dataClass: 'internal',
    ttftMs: null,
    overheadMs: 0.4,
    resumed: false,
    streamOutcome: null,
    malformedEvents: 0,
    endpoint: 'chat',
    ...t,
  };
}
