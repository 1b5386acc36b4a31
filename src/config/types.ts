/**
 * The typed, defaulted, frozen configuration every part of the gateway reads.
 * Produced only by `loadConfig` / `parseConfig` (schema.ts), never built by hand
 * outside tests. Field names follow ../shared/CONTRACT.md.
 */

export type ProviderType = 'openai' | 'azure' | 'anthropic' | 'gemini' | 'cohere' | 'ollama' | 'simulated';
export type Locality = 'external' | 'local';
export type DataClass = 'public' | 'internal' | 'confidential' | 'restricted';
export type Strategy = 'weighted' | 'latency' | 'ttft' | 'throughput' | 'least-busy' | 'usage' | 'cost';
export type Capability = 'tools' | 'vision' | 'json' | 'prefill' | 'streaming' | 'embeddings';

export interface Price {
  /** USD per 1M tokens. */
  input: number;
  output: number;
  /**
   * USD per 1M prompt tokens the upstream reports as cache hits (`prompt_tokens_details.cached_tokens`:
   * OpenAI's cached input, Anthropic's cache reads, Gemini's cached content). Unset: priced as `input`.
   */
  cachedInput?: number;
  /**
   * USD per 1M prompt tokens the upstream reports as written to its prompt cache (Anthropic's
   * `cache_creation_input_tokens`, 1.25× its input price for 5-minute entries). Unset: priced as `input`.
   */
  cacheWrite?: number;
}

export interface BackoffConfig {
  baseMs: number;
  maxMs: number;
}

export interface BreakerConfig {
  failureThreshold: number;
  recoveryMs: number;
  halfOpenProbes: number;
  /** Rolling window for the failure-rate trip (extension; contract silent). */
  windowMs: number;
  /** Open when at least `minRequests` in the window and this share failed. */
  failureRate: number;
  minRequests: number;
}

/** Timeouts that a deployment may override. */
export interface TimeoutConfig {
  requestTimeoutMs: number;
  ttftTimeoutMs: number;
  idleTimeoutMs: number;
}

export interface ResilienceConfig extends TimeoutConfig {
  deadlineMs: number;
  streamResume: boolean;
  maxRetries: number;
  backoff: BackoffConfig;
  breaker: BreakerConfig;
  cooldownMs: number;
  throttleMaxWaitMs: number;
  /** Cap on an honoured Retry-After; longer ones cool the deployment down instead. */
  maxRetryAfterWaitMs: number;
}

/** Fault scripts for `simulated` providers (and the loopback fault servers in tests). */
export type FaultKind = 'rate_limit' | 'status' | 'hang' | 'reset' | 'stream_abort' | 'stall' | 'slow';

export interface FaultRule {
  kind: FaultKind;
  /** Chance per request in [0, 1]; default 1 (always, within the window). */
  probability: number;
  /** Active only between these offsets (ms since the provider started). */
  fromMs?: number;
  toMs?: number;
  status?: number;
  /** For rate_limit: Retry-After in seconds (omitted: no header). */
  retryAfterS?: number;
  /** For stream_abort and stall: content chunks sent before the cut or the silence. */
  afterChunks?: number;
  /** For slow: extra latency in ms. */
  delayMs?: number;
  /** Optional error body message. */
  message?: string;
}

export interface SimulateConfig {
  latencyMs: number;
  ttftMs: number;
  tokensPerSecond: number;
  /** The simulated free tier: requests per rolling minute above which it answers 429. */
  rpmLimit?: number;
  faults: FaultRule[];
  /** Reply text; default names the deployment. `{model}` and `{provider}` are replaced. */
  reply?: string;
}

export interface ProviderConfig {
  id: string;
  type: ProviderType;
  /** API root as the provider's SDK takes it; defaulted per type. */
  baseUrl: string;
  /** Resolved from `${VAR}`; never logged. */
  apiKey?: string;
  locality: Locality;
  rpm?: number;
  tpm?: number;
  /** Azure only. */
  apiVersion?: string;
  /** Extra static headers sent upstream (values may use `${VAR}`). */
  headers: Record<string, string>;
  /** Max sockets in this provider's keep-alive pool. */
  maxConnections: number;
  simulate?: SimulateConfig;
}

export interface DeploymentConfig {
  provider: string;
  model: string;
  weight: number;
  price?: Price;
  rpm?: number;
  tpm?: number;
  contextWindow?: number;
  capabilities: Capability[];
  /** Per-deployment overrides of the resilience timeouts. */
  requestTimeoutMs?: number;
  ttftTimeoutMs?: number;
  idleTimeoutMs?: number;
}

export interface ModelConfig {
  name: string;
  strategy: Strategy;
  priceCeiling?: Price;
  deployments: DeploymentConfig[];
  fallbacks: string[];
  contentPolicyFallbacks: string[];
}

export interface KeyConfig {
  id: string;
  key: string;
  /** Allowed aliases; undefined means all. */
  models?: string[];
  rpm?: number;
  tpm?: number;
  dataClass: DataClass;
  allowExternal: boolean;
}

export interface ServerConfig {
  host: string;
  port: number;
  maxBodyBytes: number;
  adminKey?: string;
  /** How long SIGTERM waits for in-flight requests and streams. */
  shutdownGraceMs: number;
  cors: CorsConfig;
}

/** Which web pages' scripts may call the gateway from a browser (see server/cors.ts). */
export interface CorsConfig {
  /** Exact origins (`https://app.example.com`), or `*` for any. */
  origins: string[];
}

export interface StateConfig {
  backend: 'memory' | 'redis';
  redisUrl?: string;
  keyPrefix: string;
}

export interface TracesConfig {
  store: 'memory' | 'sqlite';
  capacity: number;
  path: string;
  /** Retention by age for the sqlite store. */
  maxAgeMs: number;
}

export interface Config {
  server: ServerConfig;
  resilience: ResilienceConfig;
  limits: { defaultRpm: number | null };
  state: StateConfig;
  traces: TracesConfig;
  privacy: { defaultDataClass: DataClass };
  providers: ProviderConfig[];
  models: ModelConfig[];
  auto?: { tiers: string[] };
  keys: KeyConfig[];
}
