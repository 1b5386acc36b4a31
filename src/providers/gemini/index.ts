/**
 * `gemini`: Google's Gemini Developer API (generativelanguage), native format.
 * POST `/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`
 * and `:batchEmbedContents`, the key in `x-goog-api-key` — never in the URL,
 * where access logs and error messages would keep it.
 */
import { parseJsonBody, type HttpUpstream } from '../http.js';
import { providerUpstream } from '../provider-upstream.js';
import type { AdapterDeps, AttemptContext, ChatResult, ChunkStream, EmbeddingsResult, ProviderAdapter } from '../types.js';
import type { ProviderConfig } from '../../config/types.js';
import type { Clock } from '../../core/clock.js';
import type { ChatRequest, EmbeddingsRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { toGenerateContentRequest } from './convert-request.js';
import { toChatCompletion } from './convert-response.js';
import { embeddingTexts, fromBatchEmbedResponse, toBatchEmbedRequest } from './embeddings.js';
import { geminiErrorFromResponse, geminiStreamError } from './errors.js';
import { GeminiChunkStream } from './stream.js';
import { unanswered } from './no-answer.js';
import { embedInBatches } from '../embedding-batches.js';
import { inputTypeOf } from '../embedding-input-type.js';
import type { BatchEmbedContentsResponse, GenerateContentResponse } from './wire.js';
import { SizeLimits } from '../refused-for-size.js';
import { promptChars } from './input-limit.js';
import { apiKeyHeader } from '../api-key-header.js';
import { servingLegacyFunctions } from '../legacy-functions.js';
import { firstToolCallOf, keepFirstToolCall, oneToolCallAsked } from '../first-tool-call.js';
import { toolCallIdMaker } from '../tool-call-id.js';

/** batchEmbedContents takes at most 100 requests a call. */
const GEMINI_EMBED_BATCH = 100;
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';
const SSE_ACCEPT = { accept: 'text/event-stream' };

/**
 * `/models/NAME` with NAME as one encoded path segment: request data (the
 * model) can only ever name a resource on the configured host, never change
 * the host, the collection or the `:method` after it. `models/X` and
 * `tunedModels/X` as written in Google's docs are accepted too.
 */
export function modelPath(model: string): string {
  const m = /^(models|tunedModels)\/(.+)$/.exec(model);
  return m ? `/${m[1]}/${encodeURIComponent(m[2]!)}` : `/models/${encodeURIComponent(model)}`;
}

export class GeminiAdapter implements ProviderAdapter {
  readonly embeddingBatch = GEMINI_EMBED_BATCH;
  private readonly http: HttpUpstream;
  private readonly clock: Clock;
  /** Input-token limits learnt from refusals for size (refused-for-size.ts). */
  private readonly sizes: SizeLimits;
  /** Gemini's function calls carry no id; OpenAI clients need one per call, unique in the conversation. */
  private readonly newToolId: () => string;
  /** `/v1beta`, unless the configured base URL already names a version. */
  private readonly prefix: string;

  constructor(
    readonly provider: ProviderConfig,
    deps: AdapterDeps,
  ) {
    this.http = providerUpstream(provider, deps.clock, apiKeyHeader(provider), geminiErrorFromResponse, provider.baseUrl || GEMINI_BASE_URL);
    this.clock = deps.clock;
    this.sizes = new SizeLimits(deps.clock);
    this.newToolId = toolCallIdMaker(deps.random);
    this.prefix = /\/v1(?:alpha|beta)?\d*$/.test(this.http.basePath) ? '' : '/v1beta';
  }

  async chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
    const request = toGenerateContentRequest(req, ctx.model);
    const path = `${this.prefix}${modelPath(ctx.model)}:generateContent`;
    const res = await this.sizes.send(ctx.model, () => promptChars(request), () => this.http.postWhole(path, JSON.stringify(request), ctx.signal));
    const parsed = answerOf(res.raw, this.clock.now());
    const failed = unanswered(parsed);
    if (failed) throw failed;
    const response = toChatCompletion(parsed, {
      model: ctx.model,
      requestId: ctx.requestId,
      created: Math.floor(this.clock.now() / 1000),
      newToolId: this.newToolId,
      choices: answersAsked(req),
    });
    // Gemini has no switch for parallel_tool_calls: false (see first-tool-call.ts).
    return { response: oneToolCallAsked(req) ? keepFirstToolCall(response) : response, headers: res.headers };
  }

  async chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    const request = toGenerateContentRequest(req, ctx.model);
    const path = `${this.prefix}${modelPath(ctx.model)}:streamGenerateContent?alt=sse`;
    const res = await this.sizes.send(ctx.model, () => promptChars(request), () => this.http.postOk(path, JSON.stringify(request), ctx.signal, SSE_ACCEPT));
    const stream = new GeminiChunkStream(res.headers, this.http.text(res, ctx.signal), {
      model: ctx.model,
      requestId: ctx.requestId,
      clock: this.clock,
      newToolId: this.newToolId,
      choices: answersAsked(req),
    });
    return firstToolCallOf(req, stream);
  }

  async embeddings(req: EmbeddingsRequest, ctx: AttemptContext): Promise<EmbeddingsResult> {
    const dimensions = typeof req.dimensions === 'number' ? req.dimensions : undefined;
    const inputType = inputTypeOf(req, 'gemini');
    const path = `${this.prefix}${modelPath(ctx.model)}:batchEmbedContents`;
    return embedInBatches(embeddingTexts(req), GEMINI_EMBED_BATCH, ctx.signal, async (texts, signal) => {
      const res = await this.http.postWhole(path, JSON.stringify(toBatchEmbedRequest(texts, ctx.model, dimensions, inputType)), signal);
      const parsed = parseObject<BatchEmbedContentsResponse>(res.raw);
      return { response: fromBatchEmbedResponse(parsed, texts, ctx.model, req.encoding_format), headers: res.headers };
    });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** The answers asked for: `n`, which goes to Gemini as candidateCount; 1 when unset. */
function answersAsked(req: ChatRequest): number {
  return typeof req.n === 'number' && req.n > 1 ? req.n : 1;
}

/** A 2xx body that must be a JSON object; anything else is the upstream's fault. */
function parseObject<T>(raw: Uint8Array): T {
  const value = parseJsonBody(raw);
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new UpstreamError({ category: 'server', message: 'upstream sent a JSON body that is not an object' });
  }
  return value as T;
}

/**
 * A 2xx generateContent body carrying an answer: candidates, or the feedback of a blocked
 * prompt (which has none) naming why it was blocked. An error object sent with the 200 (bare, or in an array as
 * Gemini's streams send it) is that error, classified; any other body without an answer is
 * the upstream's malformed one, as a 200 without `choices` is on the OpenAI path. Converted
 * as they came, both reached the client as an empty answer with finish_reason `stop`, and
 * the request never failed over.
 */
function answerOf(raw: Uint8Array, now: number): GenerateContentResponse {
  const res = parseJsonBody(raw) as GenerateContentResponse | null;
  if (res !== null && typeof res === 'object' && !Array.isArray(res)) {
    if (Array.isArray(res.candidates) && res.candidates.length > 0) return res;
    // Blocked: feedback with a blockReason, as the stream reads it (feedback alone blocks nothing).
    const feedback = res.promptFeedback as { blockReason?: unknown } | null | undefined;
    if (feedback !== null && typeof feedback === 'object' && typeof feedback.blockReason === 'string' && feedback.blockReason) return res;
  }
  throw geminiStreamError(utf8.decode(raw), now) ?? new UpstreamError({ category: 'server', message: 'gemini sent an answer without candidates' });
}

const utf8 = new TextDecoder();

export function createGeminiAdapter(provider: ProviderConfig, deps: AdapterDeps): ProviderAdapter {
  return servingLegacyFunctions(new GeminiAdapter(provider, deps));
}
