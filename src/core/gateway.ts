/**
 * createGateway(): the in-process API, and the composition root — the only
 * place that picks concrete implementations (adapters, health, limits,
 * observability hooks). The HTTP server is a thin adapter over this.
 */
import { randomUUID } from 'node:crypto';
import type { Config, KeyConfig } from '../config/types.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatRequest,
  EmbeddingsRequest,
  EmbeddingsResponse,
  ModelList,
  Usage,
} from '../protocol/openai.js';
import { validateChatRequest, validateEmbeddingsRequest } from '../protocol/validate.js';
import { ADAPTERS } from '../providers/registry.js';
import type { AdapterFactory, ProviderAdapter } from '../providers/types.js';
import { EventBus } from '../observability/events.js';
import { costUsd } from '../observability/cost.js';
import { Catalog } from '../routing/catalog.js';
import { buildChain, orderSegments, type Candidate, type ChainScope } from '../routing/chain.js';
import type { Deployment } from '../routing/deployment.js';
import { effectiveDataClass, requiresLocal } from '../routing/privacy.js';
import { chatRequirements, EMBEDDINGS_REQUIREMENTS, supports, type Requirements } from '../routing/requirements.js';
import { CLIENT_GONE, DEADLINE } from '../resilience/abort.js';
import { Executor, type CapacityGate, type Lease } from '../resilience/executor.js';
import { LimitsGate } from '../limits/gate.js';
import { KeyLimiter } from '../limits/key-limiter.js';
import { estimateEmbeddingsTokens, estimateRequestTokens } from '../limits/estimate-tokens.js';
import { Health } from '../resilience/health.js';
import { LiveStream } from '../resilience/live-stream.js';
import { RequestRun } from '../resilience/run.js';
import { openUntilCommit } from '../resilience/stream-attempt.js';
import { systemClock, systemRandom, type Clock, type Random } from './clock.js';
import { GatewayError } from './errors.js';
import { metaOf, REQUEST_ID_RE, upstreamAttempts, type RoutingMeta } from './request-meta.js';

export interface GatewayOptions {
  clock?: Clock;
  random?: Random;
  /** Replace or add adapter factories by provider type (tests, embedders). */
  adapters?: Partial<Record<string, AdapterFactory>>;
  bus?: EventBus;
  /** Outbound pacing; default: the limits/ pacer (configured rpm/tpm and what upstream headers teach). */
  gate?: CapacityGate;
}

export interface CallOptions {
  /** Aborts the request (client gone). */
  signal?: AbortSignal;
  /** Incoming request headers, lower-case names: `x-request-id`, `x-switchyard-data-class`. */
  headers?: Record<string, string | string[] | undefined>;
  /** The authenticated client key, if any (the server authenticates). */
  key?: KeyConfig | null;
}

export interface ChatResponse {
  stream: false;
  meta: RoutingMeta;
  body: ChatCompletion;
  /** Upstream bytes identical to `body`, when forwarding them unchanged is possible. */
  raw?: Uint8Array;
}

export interface ChatStreamResponse extends AsyncIterable<ChatCompletionChunk> {
  stream: true;
  meta: RoutingMeta;
}

export interface EmbeddingsResult {
  meta: RoutingMeta;
  body: EmbeddingsResponse;
  raw?: Uint8Array;
}

export interface Gateway {
  readonly config: Config;
  readonly bus: EventBus;
  readonly catalog: Catalog;
  readonly health: Health;
  chat(request: ChatRequest | unknown, opts?: CallOptions): Promise<ChatResponse | ChatStreamResponse>;
  embeddings(request: EmbeddingsRequest | unknown, opts?: CallOptions): Promise<EmbeddingsResult>;
  models(): ModelList;
  close(): Promise<void>;
}

const header = (h: CallOptions['headers'], name: string): string | undefined => {
  const v = h?.[name];
  return Array.isArray(v) ? v[0] : v;
};


export function createGateway(config: Config, options: GatewayOptions = {}): Gateway {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const bus = options.bus ?? new EventBus();
  const catalog = new Catalog(config);
  const health = new Health(config.resilience, clock, bus);
  const factories = { ...ADAPTERS, ...options.adapters };
  const adapters = new Map<string, ProviderAdapter>();
  for (const p of config.providers) {
    const factory = factories[p.type];
    if (!factory) throw new Error(`providers: no adapter for type '${p.type}' (provider '${p.id}')`);
    adapters.set(p.id, factory(p, { clock, random }));
  }
  const keyLimiter = new KeyLimiter(clock);
  // Exact token counts cost real CPU; they only matter where a token limit is configured.
  const countTokens =
    config.providers.some((p) => p.tpm) || config.models.some((m) => m.deployments.some((d) => d.tpm)) || config.keys.some((k) => k.tpm);
  const executor = new Executor({
    config,
    clock,
    random,
    health,
    bus,
    gate: options.gate ?? new LimitsGate(config, clock, bus),
    adapterFor: (d: Deployment) => adapters.get(d.provider.id)!,
  });
  const created = Math.floor(clock.now() / 1000);

  /** Common start of every routed request: identity, policy, data class, the chain, the run. */
  function begin(model: string, stream: boolean, endpoint: 'chat' | 'embeddings', req: Requirements, opts: CallOptions, tokens: (model: string) => number) {
    const key = opts.key ?? null;
    const rid = header(opts.headers, 'x-request-id');
    const id = rid && REQUEST_ID_RE.test(rid) ? rid : randomUUID();
    const now = clock.now();
    const controller = new AbortController();
    const run = new RequestRun(id, now, model, key?.id ?? null, key?.dataClass ?? config.privacy.defaultDataClass, stream, endpoint, controller.signal, now + config.resilience.deadlineMs);
    let chain: Candidate[];
    let scope: ChainScope;
    let estimatedTokens: number;
    let keyLease: Lease | undefined;
    try {
      if (key?.models && !key.models.includes(model) && !(model === 'auto' && key.models.includes('auto'))) {
        throw new GatewayError(403, 'model_not_allowed', `This key may not use the model '${model}'`, 'model');
      }
      run.dataClass = effectiveDataClass(run.dataClass, header(opts.headers, 'x-switchyard-data-class'));
      scope = { requirements: req, localOnly: requiresLocal(run.dataClass, key) };
      chain = buildChain(catalog, model, scope, random);
      estimatedTokens = countTokens ? tokens(chain[0]!.deployment.model) : req.estimatedTokens;
      if (key) {
        const k = keyLimiter.check(key, estimatedTokens);
        if (!k.ok) {
          const s = Math.max(1, Math.ceil(k.retryAfterMs / 1000));
          throw new GatewayError(429, 'rate_limited', `This key's rate limit is exhausted (rpm ${key.rpm ?? '-'}, tpm ${key.tpm ?? '-'}); retry after ${s} s`, null, s);
        }
        keyLease = k.lease;
      }
    } catch (err) {
      // Refused before routing (policy, unknown model, key limit): still one trace, so operators see it.
      record(run, undefined, err);
      throw err;
    }
    const onClientAbort = () => controller.abort(CLIENT_GONE());
    if (opts.signal?.aborted) onClientAbort();
    else opts.signal?.addEventListener('abort', onClientAbort, { once: true });
    const deadline = clock.setTimer(() => controller.abort(DEADLINE()), config.resilience.deadlineMs);
    const clearDeadline = () => deadline.clear();
    const release = () => {
      deadline.clear();
      opts.signal?.removeEventListener('abort', onClientAbort);
    };
    return { run, chain, scope, release, clearDeadline, estimatedTokens, keyLease };
  }

  function record(run: RequestRun, keyLease: Lease | undefined, err?: unknown): void {
    // Refused before any upstream call (all throttled, cooling or open; deadline): nothing spent, no quota used.
    if (err !== undefined && upstreamAttempts(run) === 0) keyLease?.cancel();
    else keyLease?.reconcile(run.usage?.total_tokens);
    if (err !== undefined) {
      if (err instanceof GatewayError) {
        run.status = err.status;
        run.errorCode = err.code;
      } else {
        run.status = 499;
        run.errorCode = 'client_closed_request';
      }
    }
    const trace = run.finish();
    if (trace) bus.emit('request', trace);
  }

  function cost(d: Deployment | undefined, u: Usage | undefined): number | null {
    return u ? costUsd(d?.price, { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens }) : null;
  }

  async function chat(request: ChatRequest | unknown, opts: CallOptions = {}): Promise<ChatResponse | ChatStreamResponse> {
    const req = validateChatRequest(request);
    const stream = req.stream === true;
    const requirements = chatRequirements(req);
    const { run, chain, scope, release, clearDeadline, estimatedTokens, keyLease } = begin(req.model, stream, 'chat', requirements, opts, (m) =>
      estimateRequestTokens(req, m),
    );
    const contentPolicyChain = () => {
      const route = catalog.aliases.get(req.model);
      return route ? orderSegments(route.contentPolicySegments, scope, random, []) : [];
    };
    if (!stream) {
      try {
        const done = await executor.run(run, chain, ({ candidate, adapter, scope: s, trace }) => {
          const d = candidate.deployment;
          s.arm(Math.min(d.timeouts.requestTimeoutMs, run.deadlineAt - clock.now()), 'attempt_timeout', `no answer within ${d.timeouts.requestTimeoutMs} ms`);
          return adapter.chat(req, { signal: s.signal, model: d.model, requestId: run.id }).then((r) => {
            trace.status = 200;
            return r;
          });
        }, { estimatedTokens, contentPolicyChain });
        const { response, raw } = done.value;
        run.usage = response.usage;
        run.costUsd = cost(done.candidate.deployment, response.usage);
        done.lease?.reconcile(response.usage?.total_tokens, done.value.headers);
        run.markResponseStart();
        record(run, keyLease);
        return { stream: false, meta: metaOf(run), body: response, raw };
      } catch (err) {
        record(run, keyLease, err);
        throw err;
      } finally {
        release();
      }
    }

    const includeUsage = req.stream_options?.include_usage === true;
    const promptTokensEstimate = requirements.estimatedTokens - (req.max_completion_tokens ?? req.max_tokens ?? 0);
    const attemptStream = (r: ChatRequest, resume: boolean) => (input: Parameters<Parameters<Executor['run']>[2]>[0]) => {
      if (resume) input.trace.resume = true;
      return openUntilCommit(input, r, run.id);
    };
    let first;
    try {
      first = await executor.run(run, chain, attemptStream(req, false), {
        estimatedTokens,
        contentPolicyChain,
        keepScope: true,
      });
    } catch (err) {
      run.streamOutcome = 'failed_before_commit';
      record(run, keyLease, err);
      release();
      throw err;
    }
    // Committed: the deadline no longer applies to a flowing stream (the stall timer does);
    // the client link stays until the stream ends.
    clearDeadline();
    run.ttftMs = first.value.ttftMs;
    run.markResponseStart();
    const resumeCandidates = (): Candidate[] => {
      const current = run.served!;
      const rest = chain.filter((c) => c.deployment.key !== current.deployment.key);
      return [current, ...rest].filter((c) => supports(c.deployment, 'prefill') && health.available(c.deployment.stateKey));
    };
    const live = new LiveStream(first, {
      run,
      health,
      cfg: config.resilience,
      includeUsage,
      promptTokensEstimate,
      resume: async (prefill) => {
        const candidates = resumeCandidates();
        if (candidates.length === 0) throw new GatewayError(503, 'all_candidates_unavailable', 'no prefill-capable candidate');
        const continued: ChatRequest = { ...req, messages: [...req.messages, { role: 'assistant', content: prefill }] };
        run.deadlineAt = clock.now() + config.resilience.deadlineMs;
        return executor.run(run, candidates, attemptStream(continued, true), {
          estimatedTokens,
          keepScope: true,
          failFastAsFailover: true,
        });
      },
      onEnd: () => {
        release();
        run.costUsd = cost(run.served?.deployment, run.usage);
        record(run, keyLease);
      },
    });
    const meta = metaOf(run);
    return {
      stream: true,
      meta,
      [Symbol.asyncIterator]: () => live[Symbol.asyncIterator](),
    };
  }

  async function embeddings(request: EmbeddingsRequest | unknown, opts: CallOptions = {}): Promise<EmbeddingsResult> {
    const req = validateEmbeddingsRequest(request);
    const { run, chain: all, release, estimatedTokens, keyLease } = begin(req.model, false, 'embeddings', EMBEDDINGS_REQUIREMENTS, opts, (m) =>
      estimateEmbeddingsTokens(req, m),
    );
    const chain = all.filter((c) => adapters.get(c.deployment.provider.id)!.embeddings !== undefined);
    try {
      if (chain.length === 0) throw new GatewayError(400, 'invalid_request', `No deployment of '${req.model}' supports embeddings`, 'model');
      const done = await executor.run(run, chain, ({ candidate, adapter, scope: s, trace }) => {
        const d = candidate.deployment;
        s.arm(Math.min(d.timeouts.requestTimeoutMs, run.deadlineAt - clock.now()), 'attempt_timeout', `no answer within ${d.timeouts.requestTimeoutMs} ms`);
        return adapter.embeddings!(req, { signal: s.signal, model: d.model, requestId: run.id }).then((r) => {
          trace.status = 200;
          return r;
        });
      }, { estimatedTokens });
      const u = done.value.response.usage;
      run.usage = u ? { prompt_tokens: u.prompt_tokens, completion_tokens: 0, total_tokens: u.total_tokens } : undefined;
      run.costUsd = cost(done.candidate.deployment, run.usage);
      done.lease?.reconcile(u?.total_tokens, done.value.headers);
      run.markResponseStart();
      record(run, keyLease);
      return { meta: metaOf(run), body: done.value.response, raw: done.value.raw };
    } catch (err) {
      record(run, keyLease, err);
      throw err;
    } finally {
      release();
    }
  }

  function models(): ModelList {
    return {
      object: 'list',
      data: catalog.modelNames().map((id) => ({ id, object: 'model' as const, created, owned_by: 'switchyard' })),
    };
  }

  async function close(): Promise<void> {
    await Promise.allSettled([...adapters.values()].map((a) => a.close()));
  }

  return { config, bus, catalog, health, chat, embeddings, models, close };
}
