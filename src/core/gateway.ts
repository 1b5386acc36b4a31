/**
 * createGateway(): the in-process API, and the composition root — the only
 * place that picks concrete implementations (adapters, health, limits,
 * observability hooks). The HTTP server is a thin adapter over this.
 */
import { performance } from 'node:perf_hooks';
import type { Config } from '../config/types.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatRequest,
  EmbeddingsRequest,
  EmbeddingsResponse,
  ModelList,
  Usage,
} from '../protocol/openai.js';
import { callTokens, checkedUsage } from '../protocol/token-count.js';
import { textTokens } from '../protocol/text-weight.js';
import { validateChatRequest, validateEmbeddingsRequest } from '../protocol/validate.js';
import { embeddingInputCount } from '../protocol/embedding-inputs.js';
import { ADAPTERS } from '../providers/registry.js';
import type { AdapterFactory, AttemptContext, ProviderAdapter } from '../providers/types.js';
import { EventBus } from '../observability/events.js';
import { newUuid } from '../observability/compact-id.js';
import { Catalog } from '../routing/catalog.js';
import { buildContentPolicyChain, type Candidate } from '../routing/chain.js';
import type { Deployment } from '../routing/deployment.js';
import { chatRequirements, embeddingsRequirements } from '../routing/requirements.js';
import { Executor, type AttemptInput, type CapacityGate } from '../resilience/executor.js';
import { Health } from '../resilience/health.js';
import type { RequestRun } from '../resilience/run.js';
import { LimitsGate } from '../limits/gate.js';
import { KeyLimiter } from '../limits/key-limiter.js';
import { estimateEmbeddingsTokens, estimateRequestTokens } from '../limits/estimate-tokens.js';
import { systemClock, systemRandom, type Clock, type Random } from './clock.js';
import { chatStream } from './chat-stream.js';
import type { StreamReader } from './stream-reader.js';
import { GatewayError } from './errors.js';
import { exactTokensThreshold, RequestLifecycle, type LifecycleDeps, type RequestContext } from './request-lifecycle.js';
import { metaOf, type RoutingMeta } from './request-meta.js';

export interface GatewayOptions {
  clock?: Clock;
  random?: Random;
  /** Replace or add adapter factories by provider type (tests, embedders). */
  adapters?: Partial<Record<string, AdapterFactory>>;
  bus?: EventBus;
  /** Outbound pacing; default: the limits/ pacer (configured rpm/tpm and what upstream headers teach). */
  gate?: CapacityGate;
}

/**
 * Per call: the client's signal, its request headers (lower-case names; `x-switchyard-data-class`
 * is also found in any case, and a list of values is read as repeated header lines), its
 * authenticated key (its `dataClass` is the floor; a class none of the four keeps the request local).
 */
export type CallOptions = RequestContext;

export interface ChatResponse {
  stream: false;
  meta: RoutingMeta;
  readonly body: ChatCompletion;
  /** Upstream bytes identical to `body`, when forwarding them unchanged is possible. */
  raw?: Uint8Array;
}

export interface ChatStreamResponse extends AsyncIterable<ChatCompletionChunk> {
  stream: true;
  meta: RoutingMeta;
  /** The same chunks read without a promise each (the server's SSE writer): iterate or read, not both. */
  readonly reader: StreamReader;
}

export interface EmbeddingsResult {
  meta: RoutingMeta;
  readonly body: EmbeddingsResponse;
  raw?: Uint8Array;
}

/** `body` is read from the adapter's answer only when asked for: a forwarded answer is then parsed, and the server never asks. */
class BufferedAnswer<T> {
  readonly raw: Uint8Array | undefined;
  constructor(
    readonly meta: RoutingMeta,
    private readonly answer: { readonly response: T; raw?: Uint8Array },
  ) {
    this.raw = answer.raw;
  }
  get body(): T {
    return this.answer.response;
  }
}

class BufferedChat extends BufferedAnswer<ChatCompletion> implements ChatResponse {
  readonly stream = false as const;
}

/** A buffered answer is complete: its response starts now and the request ends now (one clock read for both). */
function answered(run: RequestRun, life: RequestLifecycle): void {
  const end = performance.now();
  run.markResponseStart(end);
  life.finish(undefined, end);
}

/** An answer's usage, without parsing a forwarded answer that already read it. */
function usageOf<U>(answer: { readonly usage?: U | null; readonly response: { usage?: U } }): U | undefined {
  return answer.usage !== undefined ? answer.usage ?? undefined : answer.response.usage;
}

/**
 * Usage for an answer that reported none: the prompt as estimated before the call, the
 * completion from its text and tool calls weighed as the prompt is (text-weight.ts: ~4
 * ASCII characters a token, a CJK character or an emoji more than one; stream-tally.ts
 * does the same for streams). Reads the whole answer: only for answers without usage.
 */
function countedUsage(response: ChatCompletion, promptTokens: number): Usage {
  let tokens = 0;
  for (const c of Array.isArray(response.choices) ? response.choices : []) {
    const m = c?.message;
    if (typeof m?.content === 'string') tokens += textTokens(m.content);
    // Reasoning is generated (and billed) as the answer is.
    if (typeof m?.reasoning_content === 'string') tokens += textTokens(m.reasoning_content);
    for (const t of Array.isArray(m?.tool_calls) ? m.tool_calls : []) tokens += callTokens((t as { function?: unknown } | null)?.function);
    // A legacy function_call is generated as a tool call is.
    tokens += callTokens(m?.function_call);
  }
  const prompt = Math.max(0, promptTokens);
  const completion = Math.ceil(tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export interface Gateway {
  readonly config: Config;
  readonly bus: EventBus;
  readonly catalog: Catalog;
  readonly health: Health;
  chat(request: ChatRequest | unknown, opts?: CallOptions): Promise<ChatResponse | ChatStreamResponse>;
  embeddings(request: EmbeddingsRequest | unknown, opts?: CallOptions): Promise<EmbeddingsResult>;
  /**
   * Count and log a request refused before it reached the gateway (the server's
   * 401, 413 and unreadable bodies): the gateway's own refusals (invalid fields,
   * and everything after) are accounted by `chat` and `embeddings` themselves.
   */
  refused(err: unknown, endpoint: 'chat' | 'embeddings', opts?: CallOptions): void;
  models(): ModelList;
  close(): Promise<void>;
}

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
  const executor = new Executor({
    config,
    clock,
    random,
    health,
    bus,
    gate: options.gate ?? new LimitsGate(config, clock, bus),
    adapterFor: (d: Deployment) => adapters.get(d.provider.id)!,
  });
  const lifecycle: LifecycleDeps = {
    config,
    clock,
    random,
    catalog,
    bus,
    keyLimiter: new KeyLimiter(clock),
    exactTokensFrom: exactTokensThreshold(config),
  };
  const streamDeps = { executor, health, clock, resilience: config.resilience };
  const created = Math.floor(clock.now() / 1000);

  /** A buffered attempt under the attempt timeout (bounded by the deadline). */
  const buffered =
    <T>(run: RequestRun, call: (adapter: ProviderAdapter, ctx: AttemptContext) => Promise<T>) =>
    ({ candidate, adapter, scope, remainingMs }: AttemptInput): Promise<T> => {
      const t = candidate.deployment.timeouts.requestTimeoutMs;
      // The deadline is enforced by the request's signal: arming for it here too would race it, and a lost race reads as an upstream timeout.
      if (t < remainingMs) scope.arm(t, 'attempt_timeout');
      // The executor marks the attempt's trace 200 when this resolves.
      return call(adapter, { signal: scope.signal, model: candidate.deployment.model, requestId: run.id });
    };

  /** A client error before routing: a `refused` event (no trace; see RefusedEvent). */
  function refused(err: unknown, endpoint: 'chat' | 'embeddings', opts: CallOptions = {}, body?: unknown): void {
    if (!(err instanceof GatewayError) || !bus.has('refused')) return;
    const model = (body as { model?: unknown } | null | undefined)?.model;
    bus.emit('refused', {
      requestId: opts.requestId ?? newUuid(),
      endpoint,
      status: err.status,
      errorCode: err.code,
      keyId: opts.key?.id ?? null,
      model: typeof model === 'string' ? model : null,
    });
  }

  /** `validate`, with a refusal accounted. */
  function validated<T>(validate: (body: unknown) => T, endpoint: 'chat' | 'embeddings', request: unknown, opts: CallOptions): T {
    try {
      return validate(request);
    } catch (err) {
      refused(err, endpoint, opts, request);
      throw err;
    }
  }

  async function chat(request: ChatRequest | unknown, opts: CallOptions = {}): Promise<ChatResponse | ChatStreamResponse> {
    const req = validated(validateChatRequest, 'chat', request, opts);
    const requirements = chatRequirements(req);
    const life = new RequestLifecycle(lifecycle, req.model, req.stream === true, 'chat', requirements, opts, (m) => estimateRequestTokens(req, m));
    const contentPolicyChain = (refused: Candidate) => buildContentPolicyChain(catalog, req.model, refused, life.scope, random);
    if (req.stream === true) return chatStream(streamDeps, req, requirements, life, contentPolicyChain);
    const { run } = life;
    try {
      const done = await executor.run(run, life.chain, buffered(run, (a, ctx) => a.chat(req, ctx)), {
        estimatedTokens: life.estimatedTokens,
        contentPolicyChain,
      });
      const answer = done.value;
      // An upstream that reports no usage (some OpenAI-compatible servers), or counts that are not counts, is counted from the text, as streams are.
      const usage = checkedUsage(usageOf(answer), () => countedUsage(answer.response, requirements.promptTokens));
      run.usage = usage;
      // A native answer is built here, not forwarded: the client gets the counts the gateway used
      // (an upstream's -50 or 1e300 replaced by its own count), as traces and limits do.
      if (answer.raw === undefined && answer.response.usage !== undefined && answer.response.usage !== usage) answer.response.usage = usage;
      done.lease?.reconcile(usage.total_tokens, answer.headers);
      answered(run, life);
      return new BufferedChat(metaOf(run), answer);
    } catch (err) {
      life.fail(err);
      throw err;
    }
  }

  async function embeddings(request: EmbeddingsRequest | unknown, opts: CallOptions = {}): Promise<EmbeddingsResult> {
    const req = validated(validateEmbeddingsRequest, 'embeddings', request, opts);
    const life = new RequestLifecycle(lifecycle, req.model, false, 'embeddings', embeddingsRequirements(req.input), opts, (m) => estimateEmbeddingsTokens(req, m));
    const { run } = life;
    const chain = life.chain.filter((c) => adapters.get(c.deployment.provider.id)!.embeddings !== undefined);
    try {
      if (chain.length === 0) throw new GatewayError(400, 'invalid_request', `No deployment of '${req.model}' supports embeddings`, 'model');
      const done = await executor.run(run, chain, buffered(run, (a, ctx) => a.embeddings!(req, ctx)), {
        estimatedTokens: life.estimatedTokens,
        callsFor: embeddingCalls(req),
      });
      const answer = done.value;
      const u = usageOf(answer);
      run.usage = u ? { prompt_tokens: u.prompt_tokens, completion_tokens: 0, total_tokens: u.total_tokens } : undefined;
      done.lease?.reconcile(u?.total_tokens, answer.headers);
      answered(run, life);
      return new BufferedAnswer(metaOf(run), answer);
    } catch (err) {
      life.fail(err);
      throw err;
    }
  }

  /**
   * Calls an embeddings attempt makes on a deployment whose provider caps the texts a call
   * carries (Gemini 100, Cohere 96): each is a request to the upstream's rpm, so each is paced.
   * Undefined when every attempt is one call.
   */
  function embeddingCalls(req: EmbeddingsRequest): ((d: Deployment) => number) | undefined {
    const texts = embeddingInputCount(req.input);
    if (texts <= 1) return undefined;
    return (d) => {
      const batch = adapters.get(d.provider.id)!.embeddingBatch;
      return batch !== undefined && texts > batch ? Math.ceil(texts / batch) : 1;
    };
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

  return { config, bus, catalog, health, chat, embeddings, refused, models, close };
}
