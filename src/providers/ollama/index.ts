/**
 * `ollama`: Ollama's native API (`/api/chat`, `/api/embed`), translated to and
 * from the OpenAI shapes. (Ollama's `/v1` OpenAI-compatible API can instead be
 * configured as an `openai` provider.) An `apiKey`, when set, goes as a Bearer
 * token for hosted Ollama or an authenticating proxy.
 */
import { parseJsonBody, type HttpUpstream } from '../http.js';
import { providerUpstream } from '../provider-upstream.js';
import type { AdapterDeps, AttemptContext, ChatResult, ChunkStream, EmbeddingsResult, ProviderAdapter } from '../types.js';
import type { ProviderConfig } from '../../config/types.js';
import type { ChatRequest, EmbeddingsRequest } from '../../protocol/openai.js';
import { toOllamaRequest } from './request.js';
import { fromOllamaResponse } from './response.js';
import { OllamaChunkStream } from './stream.js';
import { fromOllamaEmbed, toOllamaEmbed } from './embeddings.js';
import { ollamaErrorFromResponse } from './errors.js';
import { apiKeyHeader } from '../api-key-header.js';
import { servingLegacyFunctions } from '../legacy-functions.js';
import { firstToolCallOf, keepFirstToolCall, oneToolCallAsked } from '../first-tool-call.js';
import { toolCallIdMaker } from '../tool-call-id.js';
import { ThinkRefusals } from './think.js';
import type { UpstreamError } from '../../resilience/upstream-error.js';

const NDJSON_ACCEPT = { accept: 'application/x-ndjson' };

export class OllamaAdapter implements ProviderAdapter {
  private readonly http: HttpUpstream;
  /** Ollama's tool calls may come without ids; OpenAI clients need one to answer them. */
  private readonly newToolId: () => string;
  private readonly thinkRefusals: ThinkRefusals;

  constructor(
    readonly provider: ProviderConfig,
    private readonly deps: AdapterDeps,
  ) {
    this.http = providerUpstream(provider, deps.clock, apiKeyHeader(provider), ollamaErrorFromResponse);
    this.newToolId = toolCallIdMaker(deps.random);
    this.thinkRefusals = new ThinkRefusals(deps.clock);
  }

  async chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
    const body = JSON.stringify(toOllamaRequest(req, ctx.model, false, this.thinks(req, ctx.model)));
    const res = await this.http.postWhole('/api/chat', body, ctx.signal);
    const value = parseJsonBody(res.raw);
    const response = fromOllamaResponse(value, ctx.model, this.created(), `chatcmpl-${ctx.requestId}`, this.newToolId);
    // Ollama has no switch for parallel_tool_calls: false (see first-tool-call.ts).
    return { response: oneToolCallAsked(req) ? keepFirstToolCall(response) : response, headers: res.headers };
  }

  async chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    const body = JSON.stringify(toOllamaRequest(req, ctx.model, true, this.thinks(req, ctx.model)));
    const res = await this.http.postOk('/api/chat', body, ctx.signal, NDJSON_ACCEPT);
    const stream = new OllamaChunkStream(res.headers, this.http.text(res, ctx.signal), ctx.model, this.created(), `chatcmpl-${ctx.requestId}`, this.newToolId);
    return firstToolCallOf(req, stream);
  }

  async embeddings(req: EmbeddingsRequest, ctx: AttemptContext): Promise<EmbeddingsResult> {
    const embed = toOllamaEmbed(req, ctx.model);
    const res = await this.http.postWhole('/api/embed', JSON.stringify(embed), ctx.signal);
    const value = parseJsonBody(res.raw);
    const inputs = typeof embed.input === 'string' ? 1 : embed.input.length;
    return { response: fromOllamaEmbed(value, ctx.model, req.encoding_format, inputs), headers: res.headers };
  }

  /** A model that refused `think` (think.ts) is asked again at once, without it. */
  adaptTo(err: UpstreamError, model: string): boolean {
    return this.thinkRefusals.learn(err, model);
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /** Whether `think` may go with this request: read only when it asks for reasoning. */
  private thinks(req: ChatRequest, model: string): boolean {
    return req.reasoning_effort == null || !this.thinkRefusals.has(model);
  }

  private created(): number {
    return Math.floor(this.deps.clock.now() / 1000);
  }
}

export function createOllamaAdapter(provider: ProviderConfig, deps: AdapterDeps): ProviderAdapter {
  return servingLegacyFunctions(new OllamaAdapter(provider, deps));
}
