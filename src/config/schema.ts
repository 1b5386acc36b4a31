/**
 * The shape of a configuration document: one zod schema, strict everywhere (an
 * unknown field is a typo until proven otherwise), with every static default
 * from DEFAULTS. Rules that depend on another field (a provider's type, another
 * entry's id) live in checks.ts, because zod skips an object's refinements once
 * any of its fields fails, and every problem must be reported in one pass.
 */
import * as z from 'zod';
import { DEFAULTS } from './defaults.js';
import { isListenHost, LISTEN_HOST_REASON, unbracket } from './loopback.js';
import { originProblem } from './origin.js';
import type { Capability, DataClass, FaultKind, ProviderType, Strategy } from './types.js';

export { DEFAULTS, DEFAULT_AZURE_API_VERSION, DEFAULT_BASE_URLS, DEFAULT_LOCALITY } from './defaults.js';

/** A tuple listing every member of the union U (a compile error if one is missing). */
const every =
  <U extends string>() =>
  <const T extends readonly [U, ...U[]]>(values: T & ([U] extends [T[number]] ? unknown : never)): T =>
    values;

export const PROVIDER_TYPES = every<ProviderType>()([
  'openai',
  'azure',
  'anthropic',
  'gemini',
  'cohere',
  'ollama',
  'simulated',
]);
export const STRATEGIES = every<Strategy>()(['weighted', 'latency', 'ttft', 'throughput', 'least-busy', 'usage', 'cost']);
export const CAPABILITIES = every<Capability>()(['tools', 'vision', 'json', 'prefill', 'streaming', 'embeddings']);
export const DATA_CLASSES = every<DataClass>()(['public', 'internal', 'confidential', 'restricted']);
export const FAULT_KINDS = every<FaultKind>()(['rate_limit', 'status', 'hang', 'reset', 'stream_abort', 'stall', 'slow']);

const posInt = () => z.number().int().positive();
const nonNegInt = () => z.number().int().min(0);
// Durations that end up in a Node timer: past 2^31-1 ms (24.8 days) setTimeout fires after 1 ms
// instead, so shutdownGraceMs: 3000000000 would cut in-flight requests at once.
const MAX_TIMER_MS = 2_147_483_647;
// The bound first, ending the checks when it fails: else int() adds its own bound, 2^53-1, as a second problem.
const timerMs = () => z.number().max(MAX_TIMER_MS, { abort: true }).int().min(0);
const posTimerMs = () => z.number().max(MAX_TIMER_MS, { abort: true }).int().positive();
const nonEmpty = () => z.string().min(1);
const noSlash = () =>
  nonEmpty().refine((s) => !s.includes('/'), { error: 'must not contain "/" (it separates PROVIDER/MODEL)' });

function originIssue(s: string, ctx: z.RefinementCtx): void {
  const why = originProblem(s);
  if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
}

export function isRedisUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'redis:' || u.protocol === 'rediss:';
  } catch {
    return false;
  }
}

const PriceSchema = z.strictObject({
  input: z.number().min(0),
  output: z.number().min(0),
});
/** A deployment's price may also name what its prompt cache's hits and writes cost; a ceiling bounds input and output only. */
const DeploymentPriceSchema = PriceSchema.extend({ cachedInput: z.number().min(0).optional(), cacheWrite: z.number().min(0).optional() });

const FaultSchema = z.strictObject({
  kind: z.enum(FAULT_KINDS),
  probability: z.number().min(0).max(1).default(DEFAULTS.simulate.faultProbability),
  fromMs: nonNegInt().optional(),
  toMs: nonNegInt().optional(),
  status: z.number().int().min(100).max(599).optional(),
  retryAfterS: z.number().min(0).optional(),
  afterChunks: nonNegInt().optional(),
  delayMs: timerMs().optional(),
  message: z.string().optional(),
});

const SimulateSchema = z.strictObject({
  latencyMs: timerMs().default(DEFAULTS.simulate.latencyMs),
  ttftMs: timerMs().default(DEFAULTS.simulate.ttftMs),
  // One piece every 1000/tokensPerSecond ms goes into a timer: below 0.001 (a piece every ~17 minutes) it could pass the timer cap.
  tokensPerSecond: z.number().min(0.001).default(DEFAULTS.simulate.tokensPerSecond),
  rpmLimit: posInt().optional(),
  faults: z.array(FaultSchema).default([]),
  reply: z.string().optional(),
});

const ProviderSchema = z.strictObject({
  id: noSlash(),
  type: z.enum(PROVIDER_TYPES),
  // Defaulted per type, and checked as a URL per type, in checks.ts / parse.ts.
  baseUrl: nonEmpty().optional(),
  apiKey: z.string().optional(),
  locality: z.enum(['external', 'local']).optional(),
  rpm: posInt().optional(),
  tpm: posInt().optional(),
  apiVersion: nonEmpty().optional(),
  headers: z.record(z.string(), z.string()).default({}),
  maxConnections: posInt().default(DEFAULTS.provider.maxConnections),
  simulate: SimulateSchema.optional(),
});

const DeploymentSchema = z.strictObject({
  provider: nonEmpty(),
  model: nonEmpty(),
  weight: z.number().positive().default(DEFAULTS.deployment.weight),
  price: DeploymentPriceSchema.optional(),
  rpm: posInt().optional(),
  tpm: posInt().optional(),
  contextWindow: posInt().optional(),
  capabilities: z.array(z.enum(CAPABILITIES)).default([]),
  requestTimeoutMs: posTimerMs().optional(),
  ttftTimeoutMs: posTimerMs().optional(),
  idleTimeoutMs: posTimerMs().optional(),
  // Named so its refusal says why: "unknown field" read as a typo of a setting that exists here.
  deadlineMs: z
    .unknown()
    .refine((v) => v === undefined, { error: 'the deadline bounds the whole request, every candidate included: set resilience.deadlineMs (one attempt on this deployment: requestTimeoutMs)' })
    .optional() as z.ZodType<undefined>,
});

const ModelSchema = z.strictObject({
  name: noSlash().refine((n) => n !== 'auto', { error: '"auto" is reserved for auto.tiers' }),
  strategy: z.enum(STRATEGIES).default(DEFAULTS.model.strategy),
  priceCeiling: PriceSchema.optional(),
  deployments: z.array(DeploymentSchema).min(1),
  fallbacks: z.array(nonEmpty()).default([]),
  contentPolicyFallbacks: z.array(nonEmpty()).default([]),
});

const KeySchema = z.strictObject({
  id: nonEmpty(),
  key: nonEmpty(),
  models: z.array(nonEmpty()).optional(),
  rpm: posInt().optional(),
  tpm: posInt().optional(),
  // Defaults to privacy.defaultDataClass, filled in after parsing.
  dataClass: z.enum(DATA_CLASSES).optional(),
  allowExternal: z.boolean().default(DEFAULTS.key.allowExternal),
});

const d = DEFAULTS;

export const ConfigSchema = z.strictObject({
  server: z
    .strictObject({
      // Brackets dropped: server.listen('[::1]') looks the text up as a name and fails.
      // Empty is said as that alone (abort), not also as a malformed host.
      host: z.string().min(1, { abort: true }).refine(isListenHost, { error: LISTEN_HOST_REASON }).transform(unbracket).default(d.server.host),
      port: z.number().int().min(0).max(65_535).default(d.server.port),
      maxBodyBytes: posInt().default(d.server.maxBodyBytes),
      adminKey: z.string().optional(),
      shutdownGraceMs: timerMs().default(d.server.shutdownGraceMs),
      cors: z
        .strictObject({
          origins: z.array(z.string().superRefine(originIssue)).default(() => [...d.server.cors.origins]),
        })
        .prefault({}),
    })
    .prefault({}),
  resilience: z
    .strictObject({
      requestTimeoutMs: posTimerMs().default(d.resilience.requestTimeoutMs),
      deadlineMs: posTimerMs().default(d.resilience.deadlineMs),
      ttftTimeoutMs: posTimerMs().default(d.resilience.ttftTimeoutMs),
      idleTimeoutMs: posTimerMs().default(d.resilience.idleTimeoutMs),
      streamResume: z.boolean().default(d.resilience.streamResume),
      maxRetries: nonNegInt().default(d.resilience.maxRetries),
      backoff: z
        .strictObject({
          baseMs: timerMs().default(d.resilience.backoff.baseMs),
          maxMs: timerMs().default(d.resilience.backoff.maxMs),
        })
        .prefault({}),
      breaker: z
        .strictObject({
          failureThreshold: posInt().default(d.resilience.breaker.failureThreshold),
          recoveryMs: posInt().default(d.resilience.breaker.recoveryMs),
          halfOpenProbes: posInt().default(d.resilience.breaker.halfOpenProbes),
          windowMs: posInt().default(d.resilience.breaker.windowMs),
          failureRate: z.number().gt(0).max(1).default(d.resilience.breaker.failureRate),
          minRequests: posInt().default(d.resilience.breaker.minRequests),
        })
        .prefault({}),
      cooldownMs: nonNegInt().default(d.resilience.cooldownMs),
      throttleMaxWaitMs: timerMs().default(d.resilience.throttleMaxWaitMs),
      maxRetryAfterWaitMs: timerMs().default(d.resilience.maxRetryAfterWaitMs),
    })
    .prefault({}),
  limits: z
    .strictObject({
      defaultRpm: posInt().nullable().default(d.limits.defaultRpm),
    })
    .prefault({}),
  state: z
    .strictObject({
      backend: z.enum(['memory', 'redis']).default(d.state.backend),
      redisUrl: z.string().refine(isRedisUrl, { error: 'must be a redis:// or rediss:// URL' }).optional(),
      keyPrefix: z.string().default(d.state.keyPrefix),
    })
    .prefault({}),
  traces: z
    .strictObject({
      store: z.enum(['memory', 'sqlite']).default(d.traces.store),
      capacity: posInt().default(d.traces.capacity),
      path: nonEmpty().default(d.traces.path),
      maxAgeMs: posInt().default(d.traces.maxAgeMs),
    })
    .prefault({}),
  privacy: z
    .strictObject({
      defaultDataClass: z.enum(DATA_CLASSES).default(d.privacy.defaultDataClass),
    })
    .prefault({}),
  providers: z.array(ProviderSchema).min(1),
  models: z.array(ModelSchema).default([]),
  auto: z.strictObject({ tiers: z.array(nonEmpty()).min(1) }).optional(),
  keys: z.array(KeySchema).default([]),
});

/** A document that passed the schema: static defaults filled, per-type defaults not yet. */
export type ConfigDocument = z.output<typeof ConfigSchema>;
