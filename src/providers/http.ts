/**
 * The upstream HTTP client every adapter shares: one undici keep-alive Pool per
 * provider origin, built once. Turns transport failures and non-2xx answers into
 * UpstreamErrors, and an aborted attempt into the abort's own reason (which the
 * executor set: attempt timeout, TTFT, stall, deadline or client gone).
 *
 * Requests go through the pool's `dispatch` with a small handler (Exchange)
 * rather than `pool.request()`: `request()` wraps every response body in a
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
import { StringDecoder } from 'node:string_decoder';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { errorFromResponse, errorFromTransport } from '../resilience/classify.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import type { Clock } from '../core/clock.js';
import type { UpstreamHeaders } from './types.js';
import type { Signal } from '../core/signal.js';

export interface UpstreamResponse {
  status: number;
  headers: UpstreamHeaders;
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
}

export type ErrorMapper = (status: number, body: string, headers: UpstreamHeaders, now: number) => UpstreamError;

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
/** Unread body bytes above which the socket is paused (a slow consumer). */
const HIGH_WATER = 64 * 1024;

export class HttpUpstream {
  private readonly pool: Pool;
  /** Path prefix of the base URL, e.g. `/v1` for `https://api.openai.com/v1`. */
  readonly basePath: string;
  private readonly headers: Record<string, string>;
  private readonly clock: Clock;
  private readonly mapError: ErrorMapper;
  private readonly mergedHeaders = new WeakMap<Record<string, string>, Record<string, string>>();

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
  }

  /** POST a body; resolves with any status. Transport failures throw UpstreamError. */
  post(path: string, body: string | Uint8Array, signal: Signal, extraHeaders?: Record<string, string>): Promise<UpstreamResponse> {
    return new Promise<UpstreamResponse>((resolve, reject) => {
      if (signal.aborted) return reject(this.transportError(signal.reason, signal));
      // No closure over this scope in the exchange: it lives as long as the response (a stream: minutes), the body string need not.
      const exchange = new Exchange(this, signal, resolve, reject);
      this.pool.dispatch(
        { method: 'POST', path: this.basePath + path, headers: extraHeaders ? this.withExtra(extraHeaders) : this.headers, body },
        exchange,
      );
    });
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
    return new Promise<WholeResponse>((resolve, reject) => {
      if (signal.aborted) return reject(this.transportError(signal.reason, signal));
      this.pool.dispatch(
        { method: 'POST', path: this.basePath + path, headers: extraHeaders ? this.withExtra(extraHeaders) : this.headers, body },
        new WholeExchange(this, signal, resolve, reject),
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

/** The part of an Exchange a reader sees: the body's chunks as they come. */
export interface UpstreamBody {
  /** Read as it arrives: then unread data above a bound pauses the socket (a whole-body read never does). */
  streaming: boolean;
  readonly ended: boolean;
  readonly failure: unknown;
  hasData(): boolean;
  /** Everything received and not yet taken, as one buffer. */
  takeAll(): Uint8Array;
  /** Resolves when something changes: data, the end, or a failure. */
  next(): Promise<void>;
  /** Not reading any further: abort the exchange unless it already ended. */
  abandon(): void;
}

const EMPTY = new Uint8Array(0);

/**
 * One request/response with undici's dispatcher: resolves the head, then holds
 * the body's chunks until read. Aborts on the attempt's signal (the reason
 * becomes the failure, so readers report why).
 */
class Exchange implements Dispatcher.DispatchHandler, UpstreamBody {
  streaming = false;
  ended = false;
  failure: unknown = undefined;
  private abortRequest: ((err?: Error) => void) | undefined;
  private resumeSocket: (() => void) | undefined;
  private paused = false;
  private chunks: Buffer[] = [];
  private size = 0;
  private waiter: (() => void) | undefined;
  private head: ((res: UpstreamResponse) => void) | undefined;
  private readonly onAbort = () => this.fail(this.signal.reason);

  private reject: ((err: unknown) => void) | undefined;

  constructor(
    private readonly http: HttpUpstream,
    private readonly signal: Signal,
    resolve: (res: UpstreamResponse) => void,
    reject: (err: unknown) => void,
  ) {
    this.head = resolve;
    this.reject = reject;
    signal.addEventListener('abort', this.onAbort);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    // Aborted while queued for a connection: stop it now that it can be stopped.
    if (this.failure !== undefined) abort(toError(this.failure));
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the real head follows
    this.resumeSocket = resume;
    const resolve = this.head;
    this.head = undefined;
    this.reject = undefined;
    resolve?.({ status, headers: headersOf(rawHeaders), body: this });
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.wake();
    // A slow reader: stop reading the socket until it catches up (takeAll resumes).
    if (this.streaming && this.size > HIGH_WATER) this.paused = true;
    return !this.paused;
  }

  onComplete(): void {
    this.ended = true;
    this.signal.removeEventListener('abort', this.onAbort);
    this.wake();
  }

  onError(err: Error): void {
    this.fail(err);
  }

  hasData(): boolean {
    return this.size > 0;
  }

  takeAll(): Uint8Array {
    const { chunks, size } = this;
    if (size === 0) return EMPTY;
    this.chunks = [];
    this.size = 0;
    if (this.paused) {
      this.paused = false;
      this.resumeSocket?.();
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  }

  next(): Promise<void> {
    return new Promise<void>((resolve) => (this.waiter = resolve));
  }

  abandon(): void {
    if (!this.ended) this.fail(new Error('upstream body abandoned'));
  }

  private fail(err: unknown): void {
    if (this.ended || this.failure !== undefined) return;
    this.failure = err ?? new Error('aborted');
    this.signal.removeEventListener('abort', this.onAbort);
    if (this.head) {
      this.head = undefined;
      this.reject?.(this.http.transportError(this.failure, this.signal));
      this.reject = undefined;
    }
    this.abortRequest?.(toError(this.failure));
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

/**
 * A streaming body as decoded text, pulled: `read` returns what has arrived
 * (null when nothing has: then `wait`), `done` once the body ended and all of
 * it was read. Parsers built on it await only when there is nothing to parse,
 * instead of one async-generator step per network read — thousands of slow
 * streams then hold no generator frames or promises between their events.
 */
export class TextSource {
  // StringDecoder, not TextDecoder: the same replacement of bad bytes, but no ICU
  // converter per stream (a few KB each, thousands of streams at once).
  private readonly decoder = new StringDecoder('utf8');
  private first = true;
  done = false;

  constructor(
    private readonly body: UpstreamBody,
    private readonly mapError: (err: unknown) => Error,
  ) {
    body.streaming = true;
  }

  /** Text received and not yet read (may be ''), or null when nothing is left now; throws the transport error of a failed body. */
  read(): string | null {
    const body = this.body;
    if (body.hasData()) {
      let text = this.decoder.write(body.takeAll());
      // A leading byte-order mark is not content (TextDecoder dropped it too).
      if (this.first && text.length > 0) {
        this.first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      return text;
    }
    if (body.failure !== undefined) throw this.mapError(body.failure);
    if (body.ended && !this.done) {
      this.done = true;
      return this.decoder.end();
    }
    return null;
  }

  /** Resolves when something changed: data, the end, or a failure. */
  wait(): Promise<void> {
    return this.body.next();
  }

  /** Not reading any further: release the connection (aborting the exchange unless it ended). */
  release(): void {
    this.body.abandon();
  }
}

/** A whole 2xx answer. */
export interface WholeResponse {
  headers: UpstreamHeaders;
  raw: Uint8Array;
}

/** One buffered request/response: settles once, when the answer has fully arrived (or failed). */
class WholeExchange implements Dispatcher.DispatchHandler {
  private abortRequest: ((err?: Error) => void) | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  private status = 0;
  private headers: UpstreamHeaders = {};
  private settled = false;
  private readonly onAbort = () => this.fail(this.signal.reason);

  constructor(
    private readonly http: HttpUpstream,
    private readonly signal: Signal,
    private readonly resolve: (res: WholeResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    signal.addEventListener('abort', this.onAbort);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    if (this.settled) abort(new Error('aborted'));
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    if (status < 200) return true; // 1xx: the real head follows
    this.status = status;
    this.headers = headersOf(rawHeaders);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    this.settled = true;
    this.signal.removeEventListener('abort', this.onAbort);
    const { chunks, size, status } = this;
    const raw = size === 0 ? EMPTY : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    if (status >= 200 && status < 300) this.resolve({ headers: this.headers, raw });
    else this.reject(this.http.errorFromAnswer(status, raw, this.headers));
  }

  onError(err: Error): void {
    this.fail(err);
  }

  private fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.signal.removeEventListener('abort', this.onAbort);
    this.reject(this.http.transportError(err ?? new Error('aborted'), this.signal));
    this.abortRequest?.(toError(err ?? new Error('aborted')));
  }
}

const toError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/**
 * Response headers as an object (lower-case names, repeats as arrays), made
 * once from undici's raw pairs, which are then dropped: a stream keeps only
 * the strings it may still need (rate-limit headers), not the buffers.
 */
export function headersOf(raw: Buffer[]): UpstreamHeaders {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    if (name === '__proto__') continue; // would replace the object's prototype, not add a header
    const value = raw[i + 1]!.toString('latin1');
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[name] = [prev, value];
  }
  return out;
}
