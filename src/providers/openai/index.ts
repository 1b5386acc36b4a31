/**
 * `openai`: any OpenAI-compatible server (OpenAI, vLLM, a LiteLLM proxy,
 * Ollama's /v1, Groq, Together...). Requests go out as the client sent them
 * with only `model` replaced; buffered answers are forwarded byte for byte.
 * A server that answers a stream request with one JSON completion has it
 * streamed on (completion-stream.ts).
 */
import { isUtf8 } from 'node:buffer';
import { parseJsonBody, type HttpUpstream, type UpstreamResponse } from '../http.js';
import { providerUpstream } from '../provider-upstream.js';
import { OpenAIChunkStream } from './stream.js';
import { openAIErrorOf } from './errors.js';
import { CompletionChunkStream, completionChunks, isJsonContentType } from './completion-stream.js';
import type { AdapterDeps, AttemptContext, ChatResult, ChunkStream, EmbeddingsResult, ProviderAdapter, UpstreamHeaders } from '../types.js';
import type { ProviderConfig } from '../../config/types.js';
import type { Clock } from '../../core/clock.js';
import type { ChatCompletion, ChatRequest, EmbeddingsRequest, EmbeddingsResponse, Usage } from '../../protocol/openai.js';
import { scanJsonShape } from '../../protocol/json-shape.js';
import { tokenCount } from '../../protocol/token-count.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { splicedBody } from '../../protocol/raw-body.js';
import { checkedVectors, float32Base64 } from '../../protocol/embedding-base64.js';
import { embeddingInputCount } from '../../protocol/embedding-inputs.js';
import { embeddingCountError, embeddingIndexError } from '../embedding-count.js';
import { apiKeyHeader } from '../api-key-header.js';
import { RefusedParams } from './refused-params.js';

export interface OpenAICompatibleOptions {
  /** Path of chat completions under the base URL. */
  chatPath: (model: string) => string;
  embeddingsPath: (model: string) => string;
  authHeaders: Record<string, string>;
  /** Extra query string (Azure's api-version), appended to every path. */
  query?: string;
}

export function openAIAuthHeaders(p: ProviderConfig): Record<string, string> {
  return apiKeyHeader(p);
}

/** Models remembered as taking only `max_completion_tokens`, per adapter: bounded, as a pinned model's name is the client's. */
const MAX_RENAMED_MODELS = 256;

export class OpenAICompatibleAdapter implements ProviderAdapter {
  protected readonly http: HttpUpstream;
  private readonly query: string;
  private readonly clock: Clock;
  /**
   * Models that refused `max_tokens` (OpenAI's reasoning models, o1 to gpt-5: "Use
   * 'max_completion_tokens' instead"), learnt from that refusal (`adaptTo`) rather than from
   * their names, which on Azure are the operator's own. A client's `max_tokens` goes to them as
   * `max_completion_tokens`. Not sent to every model: older Azure api-versions and some
   * compatible servers do not know it.
   */
  private readonly completionTokensOnly = new Set<string>();
  /** Other parameters models refused (a reasoning model's temperature): refused here from then on. */
  private readonly refused: RefusedParams;

  constructor(
    readonly provider: ProviderConfig,
    deps: AdapterDeps,
    private readonly opts: OpenAICompatibleOptions,
  ) {
    this.http = providerUpstream(provider, deps.clock, opts.authHeaders);
    this.query = opts.query ? `?${opts.query}` : '';
    this.clock = deps.clock;
    this.refused = new RefusedParams(deps.clock);
  }

  chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
    // Not async: the exchange resolves with the answer itself (one promise hop less a call).
    try {
      if (!this.refused.empty) {
        const known = this.refused.refusal(req, ctx.model);
        if (known) throw known;
      }
      // A buffered call: `stream` is false or absent (then the upstream's default, false) unless the client sent null.
      const body = this.renamesMaxTokens(req, ctx.model)
        ? JSON.stringify(withCompletionTokens({ ...req, model: ctx.model, stream: false }))
        : req.stream === false || req.stream === undefined
          ? bodyWithModel(req, ctx.model)
          : JSON.stringify({ ...req, model: ctx.model, stream: false });
      return this.http.postRead(this.opts.chatPath(ctx.model) + this.query, body, ctx.signal, readChatAnswer);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    if (!this.refused.empty) {
      const known = this.refused.refusal(req, ctx.model);
      if (known) throw known;
    }
    // Always ask for usage: the gateway needs it for cost and token limits, and
    // strips the usage-only chunk when the client did not ask for it.
    const renamed = this.renamesMaxTokens(req, ctx.model);
    let body: string | Uint8Array;
    if (req.stream_options?.include_usage === true && !renamed) body = bodyWithModel(req, ctx.model);
    else {
      const out = { ...req, model: ctx.model, stream: true, stream_options: { ...(req.stream_options ?? {}), include_usage: true } };
      body = JSON.stringify(renamed ? withCompletionTokens(out) : out);
    }
    const res = await this.http.postOk(this.opts.chatPath(ctx.model) + this.query, body, ctx.signal, SSE_ACCEPT);
    // Once per attempt, on the head: a server that ignored `stream: true` answered one JSON completion.
    if (isJsonContentType(res.contentType)) return this.completionAsStream(res, ctx);
    return new OpenAIChunkStream(res.headers, this.http.textSource(res, ctx.signal));
  }

  /**
   * The whole JSON answer, read and checked as a buffered call's is (a malformed
   * one, or an error object sent with 200, fails the attempt as `server`), then
   * handed out as the chunks of a stream.
   */
  private async completionAsStream(res: UpstreamResponse, ctx: AttemptContext): Promise<ChunkStream> {
    const answer = readChatAnswer(await this.http.bytes(res, ctx.signal), res.headers);
    const defaults = { model: ctx.model, id: `chatcmpl-${ctx.requestId}`, created: Math.floor(this.clock.now() / 1000) };
    return new CompletionChunkStream(res.headers, completionChunks(answer.response, answer.usage, defaults));
  }

  embeddings(req: EmbeddingsRequest, ctx: AttemptContext): Promise<EmbeddingsResult> {
    try {
      const inputs = embeddingInputCount(req.input);
      const read = req.encoding_format === 'base64' ? readBase64EmbeddingsAnswer : readEmbeddingsAnswer;
      return this.http.postRead(this.opts.embeddingsPath(ctx.model) + this.query, bodyWithModel(req, ctx.model), ctx.signal, (raw, headers) => read(raw, headers, inputs));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * A model that refused the client's `max_tokens` and names `max_completion_tokens` instead is
   * sent that from now on. Already learnt is still true: a request sent before another's refusal
   * taught it (several in flight as the model is first asked) is asked again too, not refused.
   * The executor asks again once a candidate, so this never loops. Any other parameter the
   * model refused is learnt (refused-params.ts) and the candidate is not asked again.
   */
  adaptTo(err: UpstreamError, model: string): boolean {
    if (err.providerCode !== 'unsupported_parameter' || err.param !== 'max_tokens') {
      this.refused.learn(err, model);
      return false;
    }
    if (this.completionTokensOnly.has(model)) return true;
    if (this.completionTokensOnly.size >= MAX_RENAMED_MODELS) return false;
    this.completionTokensOnly.add(model);
    return true;
  }

  /** One size check on the common path: the set is empty until some model refused `max_tokens`. */
  private renamesMaxTokens(req: ChatRequest, model: string): boolean {
    return this.completionTokensOnly.size !== 0 && req.max_tokens != null && this.completionTokensOnly.has(model);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/**
 * A request copy (made by the caller) with its `max_tokens` sent as `max_completion_tokens` (a
 * value the client gave for that too wins): the same limit, under the name reasoning models take.
 */
function withCompletionTokens(req: ChatRequest): ChatRequest {
  const { max_tokens, ...rest } = req;
  return { ...rest, max_completion_tokens: req.max_completion_tokens ?? max_tokens };
}

const SSE_ACCEPT = { accept: 'text/event-stream' };

/**
 * The client's request as the upstream body with only `model` replaced. When
 * the client's bytes start with the model (as SDKs send them), those bytes go
 * out with the model spliced in (no parse-to-serialise round trip; for a
 * 100 KB prompt that is most of the gateway's own work). Otherwise the parsed
 * request is serialised in place: swap, stringify, swap back (synchronous, so
 * nobody sees the swap). V8 stringifies a parsed object on its fast path; a
 * spread copy with a changed key set takes about three times as long.
 */
export function bodyWithModel(req: { model: string }, model: string): string | Uint8Array {
  const spliced = splicedBody(req, model);
  if (spliced !== undefined) return spliced;
  const asked = req.model;
  req.model = model;
  try {
    return JSON.stringify(req);
  } finally {
    req.model = asked;
  }
}
/**
 * A 2xx answer forwarded as its bytes. Its shape is checked and its usage read
 * at once (json-shape.ts: a malformed answer fails the attempt, so the executor
 * can fail over); the full object is parsed only if somebody reads `response`
 * (the in-process API), never on the server's path. With `inputs` (embeddings)
 * the same scan checks the answer holds one vector per input, each index once.
 */
export class ForwardedAnswer<T> {
  readonly raw: Uint8Array;
  readonly usage: Usage | null;
  private parsed: T | undefined;

  constructor(
    raw: Uint8Array,
    readonly headers: UpstreamHeaders,
    field: string,
    inputs?: number,
  ) {
    // Bytes that are not UTF-8 (a server cutting a character in two) are replaced as every
    // decoder of a stream or a native answer replaces them (U+FFFD): forwarded as they came,
    // Python's json — and so the openai SDK — refused the whole answer. One vectorised check
    // (~35 ns for a short answer); the structure bytes are ASCII, so the scan reads the same.
    if (!isUtf8(raw)) raw = Buffer.from(utf8.decode(raw));
    this.raw = raw;
    const shape = scanJsonShape(raw, field, inputs);
    if (shape === undefined) {
      throw errorAnswerOf(raw, headers) ?? new UpstreamError({ category: 'server', message: `upstream sent a malformed answer (not a JSON object with a "${field}" array)` });
    }
    if (inputs !== undefined && shape.items !== inputs) throw embeddingCountError('upstream', shape.items!, inputs);
    if (inputs !== undefined && !shape.itemsFit) throw embeddingIndexError('upstream', inputs);
    this.usage = shape.usage;
  }

  get response(): T {
    return (this.parsed ??= parseJsonBody(this.raw) as T);
  }
}

/** An error answer is small; a larger body is no error object, and is not parsed to find out. */
const MAX_ERROR_ANSWER_BYTES = 64 * 1024;

/** A 2xx answer that is an error object (a proxy relaying a failure with 200): classified as that error. */
function errorAnswerOf(raw: Uint8Array, headers: UpstreamHeaders): UpstreamError | undefined {
  if (raw.byteLength > MAX_ERROR_ANSWER_BYTES) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(utf8.decode(raw));
  } catch {
    return undefined;
  }
  return openAIErrorOf(body, headers);
}
const utf8 = new TextDecoder();

function readChatAnswer(raw: Uint8Array, headers: UpstreamHeaders): ForwardedAnswer<ChatCompletion> {
  const answer = new ForwardedAnswer<ChatCompletion>(raw, headers, 'choices');
  // Without usage (or with counts that are not counts) the gateway counts the answer's text
  // (core/gateway.ts), so it parses the answer anyway: here, inside the attempt, where a
  // malformed one fails over like any other. Parsed after the attempt had succeeded, it
  // failed the request with a 500 (traced as 499).
  const u = answer.usage;
  if (u === null || tokenCount(u.prompt_tokens) === undefined || tokenCount(u.completion_tokens) === undefined) void answer.response;
  return answer;
}
const readEmbeddingsAnswer = (raw: Uint8Array, headers: UpstreamHeaders, inputs: number) => new ForwardedAnswer<EmbeddingsResponse>(raw, headers, 'data', inputs);

/** `"embedding"` as a key whose value is an array: `"embedding": [`. */
function hasFloatVector(raw: Uint8Array): boolean {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
  for (let at = buf.indexOf('"embedding"'); at >= 0; at = buf.indexOf('"embedding"', at + 1)) {
    let i = at + 11;
    while (isSpace(buf[i])) i++;
    if (buf[i] !== 0x3a) continue; // ':' — else a value, as in "object": "embedding"
    i++;
    while (isSpace(buf[i])) i++;
    if (buf[i] === 0x5b) return true; // '['
  }
  return false;
}

/**
 * An answer to `encoding_format: "base64"` (the openai SDK's default, which
 * then decodes every vector as base64). Some OpenAI-compatible servers ignore
 * the field and answer floats: forwarded as they came, the SDK decoded the
 * text of a JSON array as base64 and the client got garbage. Such vectors are
 * encoded here as OpenAI encodes them (little-endian float32); a base64 answer
 * is forwarded untouched.
 */
function readBase64EmbeddingsAnswer(raw: Uint8Array, headers: UpstreamHeaders, inputs: number): EmbeddingsResult {
  const answer = readEmbeddingsAnswer(raw, headers, inputs);
  if (!hasFloatVector(raw)) return answer;
  const parsed = answer.response;
  const data = parsed.data.map((e, i) => {
    const v: unknown = e?.embedding;
    if (typeof v === 'string') return e;
    const [vector] = checkedVectors([v], 1) ?? [];
    if (vector === undefined) throw new UpstreamError({ category: 'server', message: `upstream sent a malformed answer (embedding ${i} is neither base64 nor numbers)` });
    return { ...e, embedding: float32Base64(vector) };
  });
  return { response: { ...parsed, data }, headers, usage: answer.usage };
}

export function createOpenAIAdapter(provider: ProviderConfig, deps: AdapterDeps): ProviderAdapter {
  return new OpenAICompatibleAdapter(provider, deps, {
    chatPath: () => '/chat/completions',
    embeddingsPath: () => '/embeddings',
    authHeaders: openAIAuthHeaders(provider),
  });
}
