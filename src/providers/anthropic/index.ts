/**
 * `anthropic`: the native Messages API (`POST {baseUrl}/v1/messages`,
 * anthropic-version 2023-06-01). Requests, answers, streams and errors are
 * translated by the pure helpers beside this file; this only sends them.
 * Anthropic has no embeddings API, so `embeddings` stays undefined.
 */
import { HttpUpstream } from '../http.js';
import type { AdapterDeps, AttemptContext, ChatResult, ChunkStream, ProviderAdapter } from '../types.js';
import type { ProviderConfig } from '../../config/types.js';
import type { Clock } from '../../core/clock.js';
import type { ChatRequest } from '../../protocol/openai.js';
import { toAnthropicRequest, type ConvertOptions } from './convert-request.js';
import { parseMessage, toChatCompletion } from './convert-response.js';
import { anthropicErrorFromResponse } from './errors.js';
import { promptChars } from './input-limit.js';
import { SizeLimits } from '../refused-for-size.js';
import type { AnthropicRequest } from './wire.js';
import { AnthropicChunkStream } from './stream.js';
import { apiKeyHeader } from '../api-key-header.js';
import { servingLegacyFunctions } from '../legacy-functions.js';

/**
 * Pinned: 2023-06-01 still takes temperature/top_p, which 2026-10-21 rejects.
 * A provider may set another `anthropic-version` in its `headers`.
 */
export const ANTHROPIC_VERSION = '2023-06-01';
/** The first version without sampling parameters. */
const NO_SAMPLING_VERSION = '2026-10-21';
const MESSAGES_PATH = '/v1/messages';
const SSE_ACCEPT = { accept: 'text/event-stream' };

export function anthropicHeaders(p: ProviderConfig): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
  Object.assign(headers, apiKeyHeader(p));
  // Configured headers last, lower-cased so they replace ours whatever their
  // spelling: they may pin another version or add `anthropic-beta`.
  for (const [name, value] of Object.entries(p.headers)) headers[name.toLowerCase()] = value;
  return headers;
}

export class AnthropicAdapter implements ProviderAdapter {
  private readonly http: HttpUpstream;
  private readonly clock: Clock;
  private readonly convert: ConvertOptions;
  private readonly sizes: SizeLimits;

  constructor(
    readonly provider: ProviderConfig,
    deps: AdapterDeps,
  ) {
    const headers = anthropicHeaders(provider);
    this.http = new HttpUpstream(provider.baseUrl, {
      connections: provider.maxConnections,
      headers,
      clock: deps.clock,
      errorFromResponse: anthropicErrorFromResponse,
    });
    this.clock = deps.clock;
    this.sizes = new SizeLimits(deps.clock);
    // Dated versions compare as strings.
    this.convert = { sampling: (headers['anthropic-version'] ?? ANTHROPIC_VERSION) < NO_SAMPLING_VERSION };
  }

  async chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
    const { body, prefillTrim } = toAnthropicRequest(req, ctx.model, false, this.convert);
    const res = await this.sized(body, () => this.http.postWhole(MESSAGES_PATH, JSON.stringify(body), ctx.signal));
    const msg = parseMessage(res.raw, ctx.model);
    return { response: toChatCompletion(msg, this.created(), prefillTrim), headers: res.headers };
  }

  async chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    const { body, prefillTrim } = toAnthropicRequest(req, ctx.model, true, this.convert);
    const res = await this.sized(body, () => this.http.postOk(MESSAGES_PATH, JSON.stringify(body), ctx.signal, SSE_ACCEPT));
    return new AnthropicChunkStream(res.headers, this.http.text(res, ctx.signal), this.created(), prefillTrim, { id: `msg_${ctx.requestId}`, model: ctx.model });
  }

  /** `send`, refused for its size where the prompt plainly exceeds the input-token limit (refused-for-size.ts; a request with a cache breakpoint counts 0). */
  private sized<T>(body: AnthropicRequest, send: () => Promise<T>): Promise<T> {
    return this.sizes.send(body.model, () => promptChars(body), send);
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private created(): number {
    return Math.floor(this.clock.now() / 1000);
  }
}

export function createAnthropicAdapter(provider: ProviderConfig, deps: AdapterDeps): ProviderAdapter {
  return servingLegacyFunctions(new AnthropicAdapter(provider, deps));
}
