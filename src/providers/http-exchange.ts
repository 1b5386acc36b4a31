/**
 * The undici dispatch handlers behind HttpUpstream: `Exchange` hands over the
 * head as soon as it arrives and then the body's chunks as they come (streams,
 * and answers whose status decides how to read them); `WholeExchange` settles
 * once with the whole answer (buffered calls). Both speak undici's original
 * handler protocol — see http.ts for why.
 */
import type { Dispatcher } from 'undici';
import type { Signal } from '../core/signal.js';
import type { HttpUpstream, UpstreamResponse } from './http.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import { NO_HEADERS, type UpstreamHeaders } from './types.js';

/** Unread body bytes above which the socket is paused (a slow consumer). */
const HIGH_WATER = 64 * 1024;

/**
 * A whole 2xx answer larger than this fails the attempt as a malformed answer
 * (`server`), so an upstream gone wrong cannot take the gateway's memory. The
 * largest real answers — 2,048 embeddings of 3,072 floats written as JSON —
 * stay under 100 MB.
 */
export const MAX_ANSWER_BYTES = 128 * 1024 * 1024;
/** Of an error answer only this much is kept (the rest is read and dropped): its message is all the gateway uses. */
export const MAX_ERROR_BYTES = 64 * 1024;

const tooLarge = (max: number) => new UpstreamError({ category: 'server', message: `upstream sent a malformed answer (larger than ${max} bytes)` });

/** The most of a body kept, by its status: a 2xx answer's limit (HttpUpstream.maxAnswerBytes), or MAX_ERROR_BYTES. */
const keptBytes = (status: number, max: number) => (status >= 200 && status < 300 ? max : MAX_ERROR_BYTES);

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
  /**
   * `next` without a promise: calls `wake` once when something changes (a
   * later call replaces an earlier `wake`). A stream waiting between two
   * events then holds no promise the GC would copy (see TextSource).
   */
  onNext(wake: () => void): void;
  /** Not reading any further: abort the exchange unless it already ended. */
  abandon(): void;
}

const EMPTY = new Uint8Array(0);
const RESOLVED = Promise.resolve();

/**
 * The abort plumbing both handlers share: the attempt's signal stops the
 * request, now if undici already handed over its abort, else as soon as it
 * connects (a request aborted while queued for a connection).
 */
abstract class AbortableHandler {
  private abortRequest: ((err?: Error) => void) | undefined;
  /** Why the exchange was stopped early, once it was. */
  private stoppedBy: unknown = undefined;
  private readonly onAbort = () => this.fail(this.signal.reason);

  constructor(
    protected readonly http: HttpUpstream,
    protected readonly signal: Signal,
  ) {
    signal.addEventListener('abort', this.onAbort);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abortRequest = abort;
    if (this.stoppedBy !== undefined) abort(toError(this.stoppedBy));
  }

  onError(err: Error): void {
    this.fail(err);
  }

  /** The exchange completed: the signal no longer concerns it. */
  protected detach(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }

  /** Stop early: stop listening, and have undici abort the request (now, or once it connects). */
  protected stop(err: unknown): void {
    this.stoppedBy = err;
    this.detach();
    this.abortRequest?.(toError(err));
  }

  /** A failure from the signal or the transport; settles the exchange once. */
  protected abstract fail(err: unknown): void;
}

/**
 * One request/response with undici's dispatcher: resolves the head, then holds
 * the body's chunks until read. Aborts on the attempt's signal (the reason
 * becomes the failure, so readers report why).
 */
export class Exchange extends AbortableHandler implements Dispatcher.DispatchHandler, UpstreamBody {
  streaming = false;
  ended = false;
  failure: unknown = undefined;
  private resumeSocket: (() => void) | undefined;
  private paused = false;
  private chunks: Buffer[] = [];
  private size = 0;
  private waiter: (() => void) | undefined;
  /** `waiter` came from `onNext`: call it after the current callback (as a promise's reaction would run), not inside undici's. */
  private deferWaiter = false;
  private head: ((res: UpstreamResponse) => void) | undefined;
  private reject: ((err: unknown) => void) | undefined;
  /** The most a whole-body read keeps (keptBytes). */
  private limit = 0;
  private errorAnswer = false;

  constructor(http: HttpUpstream, signal: Signal, resolve: (res: UpstreamResponse) => void, reject: (err: unknown) => void) {
    super(http, signal);
    this.head = resolve;
    this.reject = reject;
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (status < 200) return true; // 1xx: the real head follows
    this.resumeSocket = resume;
    this.errorAnswer = status < 200 || status >= 300;
    this.limit = keptBytes(status, this.http.maxAnswerBytes);
    const resolve = this.head;
    this.head = undefined;
    this.reject = undefined;
    resolve?.({ status, headers: headersOf(rawHeaders), contentType: contentTypeOf(rawHeaders), body: this });
    return true;
  }

  onData(chunk: Buffer): boolean {
    // Read whole (not streamed and drained as it comes): bounded. Of an error answer, the first MAX_ERROR_BYTES are kept.
    if (!this.streaming && this.size + chunk.length > this.limit) {
      if (!this.errorAnswer) {
        this.fail(tooLarge(this.limit));
        return false;
      }
      if (this.size === this.limit) return true;
      chunk = chunk.subarray(0, this.limit - this.size);
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    this.wake();
    // A slow reader: stop reading the socket until it catches up (takeAll resumes).
    if (this.streaming && this.size > HIGH_WATER) this.paused = true;
    return !this.paused;
  }

  onComplete(): void {
    this.ended = true;
    this.detach();
    this.wake();
  }

  hasData(): boolean {
    return this.size > 0;
  }

  takeAll(): Uint8Array {
    const { chunks, size } = this;
    if (size === 0) return EMPTY;
    // The same array again: a fresh one per event would outlive the wait for the next.
    const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    chunks.length = 0;
    this.size = 0;
    if (this.paused) {
      this.paused = false;
      this.resumeSocket?.();
    }
    return all;
  }

  next(): Promise<void> {
    this.deferWaiter = false;
    return new Promise<void>((resolve) => (this.waiter = resolve));
  }

  onNext(wake: () => void): void {
    this.deferWaiter = true;
    this.waiter = wake;
  }

  abandon(): void {
    if (!this.ended) this.fail(new Error('upstream body abandoned'));
  }

  protected fail(err: unknown): void {
    if (this.ended || this.failure !== undefined) return;
    this.failure = err ?? new Error('aborted');
    if (this.head) {
      this.head = undefined;
      this.reject?.(this.http.transportError(this.failure, this.signal));
      this.reject = undefined;
    }
    this.stop(this.failure);
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    if (w === undefined) return;
    this.waiter = undefined;
    // Allocated now, and garbage a moment later: nothing of it waits with the stream.
    if (this.deferWaiter) void RESOLVED.then(w);
    else w();
  }
}

/** A whole 2xx answer. */
export interface WholeResponse {
  headers: UpstreamHeaders;
  raw: Uint8Array;
}

/** What a 2xx answer's bytes become; it may throw (a malformed answer), which rejects the call. */
export type AnswerReader<T> = (raw: Uint8Array, headers: UpstreamHeaders) => T;

/** The answer as it came: bytes and headers. */
export const wholeResponse: AnswerReader<WholeResponse> = (raw, headers) => ({ raw, headers });

/** One buffered request/response: settles once, when the answer has fully arrived (or failed). */
export class WholeExchange<T> extends AbortableHandler implements Dispatcher.DispatchHandler {
  private chunks: Buffer[] = [];
  private size = 0;
  private status = 0;
  private headers: UpstreamHeaders = NO_HEADERS;
  private settled = false;
  private limit = 0;

  constructor(
    http: HttpUpstream,
    signal: Signal,
    private readonly read: AnswerReader<T>,
    private readonly resolve: (answer: T) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    super(http, signal);
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    if (status < 200) return true; // 1xx: the real head follows
    this.status = status;
    this.headers = headersOf(rawHeaders);
    this.limit = keptBytes(status, this.http.maxAnswerBytes);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.size + chunk.length > this.limit) {
      if (this.status < 300) {
        this.fail(tooLarge(this.limit));
        return false;
      }
      if (this.size === this.limit) return true; // an error answer: its excess is dropped
      chunk = chunk.subarray(0, this.limit - this.size);
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    this.settled = true;
    this.detach();
    const { chunks, size, status } = this;
    const raw = size === 0 ? EMPTY : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    if (status < 200 || status >= 300) return this.reject(this.http.errorFromAnswer(status, raw, this.headers));
    // Read here rather than in an async adapter method awaiting the bytes: one promise hop less a buffered call.
    let answer: T;
    try {
      answer = this.read(raw, this.headers);
    } catch (err) {
      return this.reject(err);
    }
    this.resolve(answer);
  }

  protected fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    const e = err ?? new Error('aborted');
    this.reject(this.http.transportError(e, this.signal));
    this.stop(e);
  }
}

const toError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/**
 * The response headers the gateway acts on, as an object (lower-case names,
 * repeats as arrays): the rate-limit families and `retry-after(-ms)`, which
 * pacing, cool-downs and error classification read (limits/rate-limit-headers.ts,
 * protocol/retry-after.ts). Nothing reads any other upstream header, and a real
 * answer carries twenty-odd of them (cf-ray, openai-processing-ms, set-cookie…):
 * decoding each into an object was the largest single cost of reading an answer.
 * Names are matched against the kept prefixes byte by byte, so one that does
 * not match is never decoded; a stream keeps these strings, never undici's raw
 * buffers.
 */
export function headersOf(raw: Buffer[]): UpstreamHeaders {
  let out: Record<string, string | string[]> | undefined;
  const n = raw.length - (raw.length % 2);
  for (let i = 0; i < n; i += 2) {
    const nb = raw[i]!;
    if (!isKept(nb)) continue;
    const name = nb.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    out ??= {};
    const prev = out[name];
    if (prev === undefined) out[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[name] = [prev, value];
  }
  return out ?? NO_HEADERS;
}

const CONTENT_TYPE = Buffer.from('content-type', 'latin1');

/**
 * The `content-type` of a streamed exchange's head (undefined when absent), kept
 * apart from headersOf's map: only the stream path reads it (an upstream that
 * answers a stream request with one JSON completion), and keeping it in the map
 * would cost every answer the shared empty headers object.
 */
export function contentTypeOf(raw: Buffer[]): string | undefined {
  const n = raw.length - (raw.length % 2);
  for (let i = 0; i < n; i += 2) {
    const nb = raw[i]!;
    if (nb.length === CONTENT_TYPE.length && startsWithLower(nb, CONTENT_TYPE)) return raw[i + 1]!.toString('latin1');
  }
  return undefined;
}

/** Prefixes of every name limits/rate-limit-headers.ts reads (RATE_LIMIT_HEADERS; a test holds the two together). */
const KEPT_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-', 'retry-after'].map((p) => Buffer.from(p, 'latin1'));

/** Does this raw name start with a kept prefix, in any letter case? */
function isKept(name: Buffer): boolean {
  for (const prefix of KEPT_PREFIXES) {
    if (name.length >= prefix.length && startsWithLower(name, prefix)) return true;
  }
  return false;
}

/** Does `name` (at least as long as `prefix`) start with `prefix`, in any letter case? */
function startsWithLower(name: Buffer, prefix: Buffer): boolean {
  for (let i = 0; i < prefix.length; i++) {
    const want = prefix[i]!;
    const got = name[i]!;
    // Prefixes are lower-case letters and '-': a letter also matches its upper case.
    if (got !== want && !(want >= 0x61 && want <= 0x7a && got === want - 0x20)) return false;
  }
  return true;
}
