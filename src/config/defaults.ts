/**
 * Every default the configuration fills in, in one place, so the docs
 * (docs/configuration.md), the schema and the tests quote the same numbers.
 */
import type { DataClass, Locality, ProviderType, Strategy } from './types.js';

export const DEFAULTS = {
  server: {
    host: '127.0.0.1',
    port: 4000,
    maxBodyBytes: 4_194_304,
    shutdownGraceMs: 10_000,
    // No cross-origin browser calls: see docs/http-api.md#browsers-cors.
    cors: { origins: [] as readonly string[] },
  },
  resilience: {
    requestTimeoutMs: 30_000,
    deadlineMs: 120_000,
    ttftTimeoutMs: 20_000,
    idleTimeoutMs: 15_000,
    streamResume: true,
    maxRetries: 2,
    backoff: { baseMs: 200, maxMs: 5_000 },
    breaker: {
      failureThreshold: 5,
      recoveryMs: 30_000,
      halfOpenProbes: 1,
      windowMs: 60_000,
      failureRate: 0.5,
      minRequests: 20,
    },
    cooldownMs: 60_000,
    throttleMaxWaitMs: 2_000,
    maxRetryAfterWaitMs: 5_000,
  },
  limits: { defaultRpm: null },
  state: { backend: 'memory', keyPrefix: 'switchyard:' },
  traces: {
    store: 'memory',
    capacity: 10_000,
    path: './data/traces.db',
    maxAgeMs: 7 * 24 * 60 * 60 * 1000,
  },
  privacy: { defaultDataClass: 'internal' as DataClass },
  provider: { maxConnections: 64 },
  simulate: { latencyMs: 50, ttftMs: 30, tokensPerSecond: 200, faultProbability: 1, streamAbortAfterChunks: 1 },
  deployment: { weight: 1 },
  model: { strategy: 'weighted' as Strategy },
  key: { allowExternal: true },
} as const;

/** The public API root per provider type, as that provider's SDK takes it. Azure has none. */
/** The header each provider type's `apiKey` is sent in (the adapters set it; none for the simulator). */
export const API_KEY_HEADERS: Readonly<Record<ProviderType, string | undefined>> = {
  openai: 'authorization',
  azure: 'api-key',
  anthropic: 'x-api-key',
  gemini: 'x-goog-api-key',
  cohere: 'authorization',
  ollama: 'authorization',
  simulated: undefined,
};

export const DEFAULT_BASE_URLS: Readonly<Record<ProviderType, string | undefined>> = {
  openai: 'https://api.openai.com/v1',
  azure: undefined,
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
  cohere: 'https://api.cohere.com',
  ollama: 'http://127.0.0.1:11434',
  simulated: 'simulated://local',
};

/** Azure OpenAI `api-version` used when a provider does not set one (a GA version). */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** Types that run on the gateway's own machine unless told otherwise: ollama only at a loopback baseUrl (config/parse.ts defaultLocality). */
export const DEFAULT_LOCALITY: Readonly<Record<ProviderType, Locality>> = {
  openai: 'external',
  azure: 'external',
  anthropic: 'external',
  gemini: 'external',
  cohere: 'external',
  ollama: 'local',
  simulated: 'local',
};
