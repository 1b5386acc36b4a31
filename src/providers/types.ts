/**
 * The spec every provider adapter implements. Adapters only translate:
 * protocol request → upstream HTTP request, upstream response or stream →
 * protocol response or chunks, upstream failure → UpstreamError. They never
 * retry, wait, choose or record anything: that is the executor's job.
 */
import type { Clock, Random } from '../core/clock.js';
import type { ProviderConfig } from '../config/types.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatRequest,
  EmbeddingsRequest,
  EmbeddingsResponse,
  Usage,
} from '../protocol/openai.js';
import type { Signal } from '../core/signal.js';
import type { UpstreamError } from '../resilience/upstream-error.js';
import type { PULL_END } from '../core/iterator-pull.js';

/** An upstream answer's headers, lower-case names; from a socket only those the gateway acts on (rate limits, retry-after: see headersOf). Read-only: NO_HEADERS is shared. */
export type UpstreamHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** An answer that carried none of the headers the gateway acts on (the common case): one shared object, so readers can skip it by identity. */
export const NO_HEADERS: UpstreamHeaders = Object.freeze({});

export interface AttemptContext {
  /** Aborted on attempt timeout, TTFT/stall, deadline or client disconnect; its reason says which. */
  signal: Signal;
  /** The concrete upstream model name for this attempt. */
  model: string;
  requestId: string;
}

export interface ChatResult {
  /** May be parsed only when read (a forwarded answer): read `usage` when that is all you need. */
  readonly response: ChatCompletion;
  /**
   * The upstream's exact JSON bytes when they can be forwarded unchanged
   * (OpenAI-compatible upstreams): saves re-serialising on the hot path.
   */
  raw?: Uint8Array;
  headers: UpstreamHeaders;
  /** The answer's usage when known without reading `response` (null: the answer has none). */
  readonly usage?: Usage | null;
}

/**
 * A chat stream, already past the upstream's status line (a non-2xx is thrown
 * by `chatStream`, never yielded). Iteration ends normally only when the
 * upstream finished properly (`[DONE]`, a final `finish_reason`, `message_stop`…);
 * a stream that stops early throws an UpstreamError of category `network`.
 * Malformed events are skipped and counted in `malformed`, never yielded.
 */
export interface ChunkStream extends AsyncIterable<ChatCompletionChunk> {
  readonly headers: UpstreamHeaders;
  readonly malformed: number;
}

/**
 * Chunks read without a promise each: `pull` returns what is ready now and
 * `ready` resolves (never rejects) when pulling again may give more. A stream
 * between two events then holds one pending promise, not a chain of them —
 * for thousands of slow streams, the difference between young garbage and
 * objects the GC copies and promotes. The iterator of an OpenAI-format
 * stream offers it; other adapters' iterators are read through IteratorPull.
 */
export interface ChunkPull {
  /** The next chunk, PULL_END when the stream is over, or undefined: nothing yet (await `ready`). Throws the stream's failure. */
  pull(): ChatCompletionChunk | typeof PULL_END | undefined;
  ready(): Promise<void>;
  /** `ready` without a promise, where the stream can: `wake` is called once when pulling again may give more. */
  notify?(wake: () => void): void;
}

export const isChunkPull = (it: object): it is ChunkPull => typeof (it as Partial<ChunkPull>).pull === 'function';

export interface EmbeddingsResult {
  readonly response: EmbeddingsResponse;
  raw?: Uint8Array;
  headers: UpstreamHeaders;
  readonly usage?: EmbeddingsResponse['usage'] | null;
}

export interface ProviderAdapter {
  readonly provider: ProviderConfig;
  chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult>;
  chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream>;
  /** Absent when the provider has no embeddings API. */
  embeddings?(req: EmbeddingsRequest, ctx: AttemptContext): Promise<EmbeddingsResult>;
  /** The most texts one embeddings call carries, when the provider caps it: more are sent as several calls, each paced. */
  readonly embeddingBatch?: number;
  /**
   * The upstream refused a parameter that this adapter can send another way: learn to (or have
   * learnt it already, from another request's refusal), and say so (true), and the executor asks
   * the same candidate again at once. Called on the error path only.
   */
  adaptTo?(err: UpstreamError, model: string): boolean;
  close(): Promise<void>;
}

export interface AdapterDeps {
  clock: Clock;
  random: Random;
}

export type AdapterFactory = (provider: ProviderConfig, deps: AdapterDeps) => ProviderAdapter;

/**
 * Symbol under which an adapter may attach a chunk's exact upstream JSON text,
 * so the SSE writer can forward it without re-serialising. Anyone who mutates
 * a chunk must delete it.
 */
export const RAW_JSON: unique symbol = Symbol.for('switchyard.rawJson');
export type WithRaw<T> = T & { [RAW_JSON]?: string };
