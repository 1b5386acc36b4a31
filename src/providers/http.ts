/**
 * The upstream HTTP client every adapter shares: one undici keep-alive Pool per
 * provider origin, built once. Turns transport failures and non-2xx answers into
 * UpstreamErrors, and an aborted attempt into the abort's own reason (which the
 * executor set: attempt timeout, TTFT, stall, deadline or client gone).
 *
 * Requests go through the pool's `dispatch` with small handlers
 * (http-exchange.ts) rather than `pool.request()`: `request()` wraps every response body in a
 * Node Readable, and reading it (`arrayBuffer()`, async iteration) goes
 * through the streams machinery — together the largest single cost of a
 * proxied call. The handler keeps the body's chunks in an array until they are
 * read, pausing the socket when too much is unread.
 *
 * The handlers speak undici's original handler protocol (onConnect, onHeaders,
 * onData, onComplete, onError), the one its own `stream()` and `request()` use
 * inside: the newer onRequestStart/onResponse* protocol is adapted onto it by
 * two more objects per request that also keep the raw header buffers alive for
 * as long as the response runs — for a long stream, for minutes.
 */
import { Pool } from 'undici';
import { errorFromResponse, errorFromTransport } from '../resilience/classify.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import type { Clock } from '../core/clock.js';
import type { UpstreamHeaders } from './types.js';
import type { Signal } from '../core/signal.js';
import { Exchange, MAX_ANSWER_BYTES, WholeExchange, wholeResponse, type AnswerReader, type UpstreamBody, type WholeResponse } from './http-exchange.js';
import { TextSource } from './text-source.js';

export { contentTypeOf, headersOf, type AnswerReader, type UpstreamBody, type WholeResponse } from './http-exchange.js';
export { TextSource } from './text-source.js';

export interface UpstreamResponse {
  status: number;
  headers: UpstreamHeaders;
  /** The answer's `content-type` as sent (parameters included); undefined when it had none. */
  contentType?: string;
  /** Read it with `bytes`, `text` or `errorOf`. */
  body: UpstreamBody;
}

export interface HttpUpstreamOptions {
  connections: number;
  /** Headers sent on every request (auth, versions); merged once, here. */
  headers: Record<string, string>;
  clock: Clock;
  /** How this provider's error answers are classified (default: the generic table). */
  errorFromResponse?: ErrorMapper;
  /** A whole 2xx answer larger than this fails the attempt as malformed (default MAX_ANSWER_BYTES, 128 MiB). */
  maxAnswerBytes?: number;
}

export type ErrorMapper = (status: number, body: string, headers: UpstreamHeaders, now: number) => UpstreamError;

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

export class HttpUpstream {
  private readonly pool: Pool;
  /** Path prefix of the base URL, e.g. `/v1` for `https://api.openai.com/v1`. */
  readonly basePath: string;
  private readonly headers: Record<string, string>;
  private readonly clock: Clock;
  private readonly mapError: ErrorMapper;
  /** @internal the exchanges' bound on a whole answer read. */
  readonly maxAnswerBytes: number;
  private readonly mergedHeaders = new WeakMap<Record<string, string>, Record<string, string>>();
  /** Full request paths, built once per adapter path (a handful: one per route, or per model where the model is in the path). */
  private readonly fullPaths = new Map<string, string>();

  constructor(baseUrl: string, opts: HttpUpstreamOptions) {
    const url = new URL(baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: opts.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      // The executor owns every timeout through the attempt's Signal;
      // undici's own limits only catch a socket nobody is watching.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.headers = { ...JSON_HEADERS, ...opts.headers };
    this.clock = opts.clock;
    this.mapError = opts.errorFromResponse ?? errorFromResponse;
    this.maxAnswerBytes = opts.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  }

  /** POST a body; resolves with any status. Transport failures throw UpstreamError. */
  post(path: string, body: string | Uint8Array, signal: Signal, extraHeaders?: Record<string, string>): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => {
      if (signal.aborted) return reject(this.transportError(signal.reason, signal));
      // No closure over this scope in the exchange: it lives as long as the response (a stream: minutes), the body string need not.
      const exchange = new Exchange(this, signal, resolve, reject);
      this.pool.dispatch(
        { method: 'POST', path: this.fullPath(path), headers: extraHeaders ? this.withExtra(extraHeaders) : this.headers, body },
        exchange,
      );
    });
  }

  private fullPath(path: string): string {
    let full = this.fullPaths.get(path);
    if (full === undefined) {
      full = this.basePath + path;
      if (this.fullPaths.size < 256) this.fullPaths.set(path, full);
    }
    return full;
  }

  /**
   * The shared headers plus `extra`, merged once per `extra` object: adapters
   * pass module-level constants (`accept: text/event-stream`), so a stream
   * request costs no header-map copy.
   */
  private withExtra(extra: Record<string, string>): Record<string, string> {
    let merged = this.mergedHeaders.get(extra);
    if (merged === undefined) this.mergedHeaders.set(extra, (merged = { ...this.headers, ...extra }));
    return merged;
  }

  /**
   * POST and read the whole answer: the 2xx body as bytes with the headers, or
   * the classified UpstreamError of a non-2xx. One promise for the whole
   * exchange (a buffered call needs neither the head early nor per-chunk wake-ups).
   */
  postWhole(path: string, body: string | Uint8Array, signal: Signal, extraHeaders?: Record<string, string>): Promise<WholeResponse> {
    return this.postRead(path, body, signal, wholeResponse, extraHeaders);
  }

  /** postWhole, with the 2xx answer made into what `read` returns as it completes (a throw from `read` rejects). */
  postRead<T>(path: string, body: string | Uint8Array, signal: Signal, read: AnswerReader<T>, extraHeaders?: Record<string, string>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) return reject(this.transportError(signal.reason, signal));
      this.pool.dispatch(
        { method: 'POST', path: this.fullPath(path), headers: extraHeaders ? this.withExtra(extraHeaders) : this.headers, body },
        new WholeExchange(this, signal, read, resolve, reject),
      );
    });
  }

  /** @internal WholeExchange: a non-2xx answer as the provider's classified error. */
  errorFromAnswer(status: number, raw: Uint8Array, headers: UpstreamHeaders): Error {
    return this.mapError(status, utf8.decode(raw), headers, this.clock.now());
  }

  /** POST and require a 2xx; a non-2xx body is read and thrown as a classified UpstreamError. */
  async postOk(path: string, body: string | Uint8Array, signal: Signal, extraHeaders?: Record<string, string>): Promise<UpstreamResponse> {
    const res = await this.post(path, body, signal, extraHeaders);
    if (res.status >= 200 && res.status < 300) return res;
    throw await this.errorOf(res, signal);
  }

  /** Read a whole 2xx body as bytes. */
  async bytes(res: UpstreamResponse, signal: Signal): Promise<Uint8Array> {
    const body = res.body;
    while (!body.ended) {
      if (body.failure !== undefined) throw this.transportError(body.failure, signal);
      await body.next();
    }
    return body.takeAll();
  }

  /** A streaming body as decoded text, read without an async generator (see TextSource). */
  textSource(res: UpstreamResponse, signal: Signal): TextSource {
    return new TextSource(res.body, (err) => this.transportError(err, signal));
  }

  /** Decoded text pieces of a streaming body as they arrive, transport errors mapped. */
  async *text(res: UpstreamResponse, signal: Signal): AsyncGenerator<string> {
    const src = this.textSource(res, signal);
    try {
      for (;;) {
        const text = src.read();
        if (text !== null) {
          if (text.length > 0) yield text;
        } else if (src.done) return;
        else await src.wait();
      }
    } finally {
      // The consumer stopped early (or the body failed): release the socket.
      src.release();
    }
  }

  async errorOf(res: UpstreamResponse, signal: Signal): Promise<Error> {
    let text = '';
    try {
      text = utf8.decode(await this.bytes(res, signal));
    } catch (err) {
      return err instanceof Error ? err : this.transportError(err, signal);
    }
    return this.mapError(res.status, text, res.headers, this.clock.now());
  }

  /** An aborted attempt reports why it was aborted; anything else is a transport failure. */
  transportError(err: unknown, signal: Signal): Error {
    if (signal.aborted) return signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
    return errorFromTransport(err);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

const utf8 = new TextDecoder();

/** A 2xx body that must be JSON; anything else is the upstream's fault (`server`). */
export function parseJsonBody(raw: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(raw));
  } catch {
    throw new UpstreamError({ category: 'server', message: 'upstream sent a malformed JSON body' });
  }
}
