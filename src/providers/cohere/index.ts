/**
 * `cohere`: Cohere's native v2 API (`/v2/chat`, `/v2/embed`), translated to and
 * from the OpenAI shapes. Thin: conversion lives in request/response/stream/
 * embeddings, error fix-ups in errors.
 */
import { parseJsonBody, type HttpUpstream } from '../http.js';
import { providerUpstream } from '../provider-upstream.js';
import type { AdapterDeps, AttemptContext, ChatResult, ChunkStream, EmbeddingsResult, ProviderAdapter } from '../types.js';
import type { ProviderConfig } from '../../config/types.js';
import type { ChatRequest, EmbeddingsRequest } from '../../protocol/openai.js';
import { toCohereRequest } from './request.js';
import { fromCohereResponse } from './response.js';
import { CohereChunkStream } from './stream.js';
import { fromCohereEmbed, toCohereEmbed } from './embeddings.js';
import { embedInBatches } from '../embedding-batches.js';
import { cohereErrorFromResponse } from './errors.js';
import { apiKeyHeader } from '../api-key-header.js';
import { servingLegacyFunctions } from '../legacy-functions.js';
import { firstToolCallOf, keepFirstToolCall, oneToolCallAsked } from '../first-tool-call.js';
import { toolCallIdMaker } from '../tool-call-id.js';

/** /v2/embed takes at most 96 texts a call. */
const COHERE_EMBED_BATCH = 96;
const SSE_ACCEPT = { accept: 'text/event-stream' };

export class CohereAdapter implements ProviderAdapter {
  readonly embeddingBatch = COHERE_EMBED_BATCH;
  private readonly http: HttpUpstream;
  private readonly newToolId: () => string;

  constructor(
    readonly provider: ProviderConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.http = providerUpstream(provider, deps.clock, apiKeyHeader(provider), cohereErrorFromResponse);
    this.newToolId = toolCallIdMaker(deps.random);
  }

  async chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
    const body = JSON.stringify(toCohereRequest(req, ctx.model, false));
    const res = await this.http.postWhole('/v2/chat', body, ctx.signal);
    const value = parseJsonBody(res.raw);
    const response = fromCohereResponse(value, ctx.model, this.created(), this.newToolId);
    // Cohere has no switch for parallel_tool_calls: false (see first-tool-call.ts).
    return { response: oneToolCallAsked(req) ? keepFirstToolCall(response) : response, headers: res.headers };
  }

  async chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    const body = JSON.stringify(toCohereRequest(req, ctx.model, true));
    const res = await this.http.postOk('/v2/chat', body, ctx.signal, SSE_ACCEPT);
    const stream = new CohereChunkStream(res.headers, this.http.text(res, ctx.signal), ctx.model, this.created(), `chatcmpl-${ctx.requestId}`, this.newToolId);
    return firstToolCallOf(req, stream);
  }

  async embeddings(req: EmbeddingsRequest, ctx: AttemptContext): Promise<EmbeddingsResult> {
    const embed = toCohereEmbed(req, ctx.model);
    return embedInBatches(embed.texts, COHERE_EMBED_BATCH, ctx.signal, async (texts, signal) => {
      const res = await this.http.postWhole('/v2/embed', JSON.stringify({ ...embed, texts }), signal);
      return { response: fromCohereEmbed(parseJsonBody(res.raw), ctx.model, req.encoding_format, texts.length), headers: res.headers };
    });
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private created(): number {
    return Math.floor(this.deps.clock.now() / 1000);
  }
}

export function createCohereAdapter(provider: ProviderConfig, deps: AdapterDeps): ProviderAdapter {
  return servingLegacyFunctions(new CohereAdapter(provider, deps));
}
