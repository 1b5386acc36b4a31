/**
 * `simulated`: an in-process upstream for the demo config and timeline tests.
 *
 * Why it exists: the gateway's whole point is surviving rate limits, outages,
 * stalls and cut streams, and those must be demonstrable without API keys and
 * testable without sleeps. This adapter opens no socket; every wait goes
 * through `deps.clock.sleep(ms, ctx.signal)`, so a VirtualClock drives it and an
 * aborted attempt stops at once with `ctx.signal.reason`.
 *
 * Per request, `FaultScript.decide()` (script.ts) picks a plan from
 * `provider.simulate`: the free tier (`rpmLimit`), then the `faults` rules in
 * order (time window, probability; `slow` adds delay and keeps looking).
 * - ok: after `latencyMs` (+ slow delay) the reply of reply.ts. Streams resolve
 *   after `latencyMs` (the headers), yield the role chunk, the first piece after
 *   `ttftMs`, then one piece every 1000/`tokensPerSecond` ms, the finish chunk
 *   and always a usage-only chunk (like OpenAI with include_usage). `n` > 1:
 *   that many choices, streamed side by side as OpenAI does (chunks.ts).
 * - rate_limit / status: after `latencyMs`, the error `errorFromResponse` makes
 *   of OpenAI's error body (and Retry-After), so it classifies exactly like a
 *   real upstream's answer.
 * - hang: never answers; waits for the attempt's signal.
 * - reset: after `latencyMs`, ECONNRESET as a transport error (`network`).
 * - stall: `afterChunks` content chunks, then silence until the attempt is
 *   aborted (the gateway's stall timer); on a buffered request it is a hang.
 * - stream_abort: `afterChunks` content chunks, then a `network` error; on a
 *   buffered request it is a reset.
 * Continuation: a request ending in an assistant prefill that is a prefix of the
 * reply gets only the rest, so the gateway's stream resume delivers it once.
 * The same script and reply drive the loopback fault server (http-server.ts).
 */
import type { AdapterDeps, AttemptContext, ChatResult, ChunkStream, EmbeddingsResult, ProviderAdapter, UpstreamHeaders } from '../types.js';
import type { ProviderConfig, SimulateConfig } from '../../config/types.js';
import { DEFAULTS } from '../../config/defaults.js';
import type { ChatCompletionChunk, ChatRequest, EmbeddingsRequest } from '../../protocol/openai.js';
import { errorFromResponse, errorFromTransport } from '../../resilience/classify.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { FaultScript, type Plan } from './script.js';
import { simulateReply, toCompletion, type ReplyMeta } from './reply.js';
import { replyChunks } from './chunks.js';
import { simulateEmbeddings } from './embeddings.js';
import { rateLimitBody, statusBody } from './error-body.js';
import type { Signal } from '../../core/signal.js';

/** Used when a simulated provider has no `simulate` block. */
export const DEFAULT_SIMULATE: SimulateConfig = Object.freeze({
  latencyMs: DEFAULTS.simulate.latencyMs,
  ttftMs: DEFAULTS.simulate.ttftMs,
  tokensPerSecond: DEFAULTS.simulate.tokensPerSecond,
  faults: [],
});

const HEADERS: UpstreamHeaders = Object.freeze({ 'content-type': 'application/json' });
const STREAM_HEADERS: UpstreamHeaders = Object.freeze({ 'content-type': 'text/event-stream; charset=utf-8' });

export class SimulatedAdapter implements ProviderAdapter {
  /** Exposed so tests (and a demo's admin hook) can `enqueue` plans. */
  readonly script: FaultScript;
  private readonly sim: SimulateConfig;
  private seq = 0;

  constructor(
    readonly provider: ProviderConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.sim = provider.simulate ?? DEFAULT_SIMULATE;
    this.script = new FaultScript(this.sim, deps.clock, deps.random);
  }

  async chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
    await this.answer(this.script.decide(), ctx.signal, false);
    const reply = simulateReply(req, { provider: this.provider.id, model: ctx.model }, this.sim.reply);
    return { response: toCompletion(reply, this.meta(ctx.model)), headers: HEADERS };
  }

  async chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    const plan = this.script.decide();
    await this.answer(plan, ctx.signal, true);
    const reply = simulateReply(req, { provider: this.provider.id, model: ctx.model }, this.sim.reply);
    const cutAfter = plan.kind === 'stream_abort' ? plan.afterChunks : undefined;
    const chunks = replyChunks(reply, this.meta(ctx.model), this.sim, this.deps.clock, ctx.signal, {
      startAt: this.deps.clock.now(),
      includeUsage: true,
      cutAfter,
      stallAfter: plan.kind === 'stall' ? plan.afterChunks : undefined,
    });
    return new SimulatedChunkStream(chunks, cutAfter);
  }

  async embeddings(req: EmbeddingsRequest, ctx: AttemptContext): Promise<EmbeddingsResult> {
    await this.answer(this.script.decide(), ctx.signal, false);
    return { response: simulateEmbeddings(req, ctx.model), headers: HEADERS };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Wait as the upstream would before its status line, then throw the plan's
   * fault. Returns only for a 2xx answer (ok, or a stream that will be cut).
   */
  private async answer(plan: Plan, signal: Signal, streaming: boolean): Promise<void> {
    if (plan.kind === 'hang' || (plan.kind === 'stall' && !streaming)) return hang(signal);
    const clock = this.deps.clock;
    const delay = this.sim.latencyMs + (plan.kind === 'ok' ? plan.extraDelayMs : 0);
    if (delay > 0) await clock.sleep(delay, signal);
    else signal.throwIfAborted();
    switch (plan.kind) {
      case 'ok':
        return;
      case 'stall':
        return;
      case 'stream_abort':
        if (streaming) return;
        throw resetError();
      case 'reset':
        throw resetError();
      case 'rate_limit': {
        const headers: UpstreamHeaders =
          plan.retryAfterS === undefined ? { ...HEADERS } : { ...HEADERS, 'retry-after': String(plan.retryAfterS) };
        throw errorFromResponse(429, JSON.stringify(rateLimitBody()), headers, clock.now());
      }
      case 'status':
        throw errorFromResponse(plan.status, JSON.stringify(statusBody(plan.status, plan.message)), { ...HEADERS }, clock.now());
    }
  }

  private meta(model: string): ReplyMeta {
    const now = this.deps.clock.now();
    return { id: `chatcmpl-sim-${now.toString(36)}${(++this.seq).toString(36)}`, created: Math.floor(now / 1000), model };
  }
}

class SimulatedChunkStream implements ChunkStream {
  readonly headers = STREAM_HEADERS;
  readonly malformed = 0;

  constructor(
    private readonly chunks: AsyncGenerator<ChatCompletionChunk>,
    private readonly cutAfter: number | undefined,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    yield* this.chunks;
    if (this.cutAfter !== undefined) {
      throw new UpstreamError({
        category: 'network',
        message: `simulated stream cut after ${this.cutAfter} content chunks`,
      });
    }
  }
}

function resetError(): UpstreamError {
  return errorFromTransport({ code: 'ECONNRESET', message: 'socket hang up' });
}

/** Never answer: settle only when the attempt is aborted, with its reason. */
function hang(signal: Signal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export function createSimulatedAdapter(provider: ProviderConfig, deps: AdapterDeps): SimulatedAdapter {
  return new SimulatedAdapter(provider, deps);
}
