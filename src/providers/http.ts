/**
 * The upstream HTTP client every adapter shares: one undici keep-alive Pool per
 * provider origin, built once. Turns transport failures and non-2xx answers into
 * UpstreamErrors, and an aborted attempt into the abort's own reason (which the
 * executor set: attempt timeout, TTFT, stall, deadline or client gone).
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { errorFromResponse, errorFromTransport } from '../resilience/classify.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import type { Clock } from '../core/clock.js';
import type { UpstreamHeaders } from './types.js';

export interface UpstreamResponse {
  status: number;
  headers: UpstreamHeaders;
  body: Dispatcher.ResponseData['body'];
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
const STREAM = { stream: true };
const ignore = () => {};

export class HttpUpstream {
  private readonly pool: Pool;
  /** Path prefix of the base URL, e.g. `/v1` for `https://api.openai.com/v1`. */
  readonly basePath: string;
  private readonly headers: Record<string, string>;
  private readonly clock: Clock;
  private readonly mapError: ErrorMapper;

  constructor(baseUrl: string, opts: HttpUpstreamOptions) {
    const url = new URL(baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, {
      connections: opts.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      // The executor owns every timeout through the attempt's AbortSignal;
      // undici's own limits only catch a socket nobody is watching.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    this.headers = { ...JSON_HEADERS, ...opts.headers };
    this.clock = opts.clock;
    this.mapError = opts.errorFromResponse ?? errorFromResponse;
  }

  /** POST a body; resolves with any status. Transport failures throw UpstreamError. */
  async post(path: string, body: string, signal: AbortSignal, extraHeaders?: Record<string, string>): Promise<UpstreamResponse> {
    try {
      const res = await this.pool.request({
        method: 'POST',
        path: this.basePath + path,
        headers: extraHeaders ? { ...this.headers, ...extraHeaders } : this.headers,
        body,
        signal,
      });
      return { status: res.statusCode, headers: res.headers as UpstreamHeaders, body: res.body };
    } catch (err) {
      throw this.transportError(err, signal);
    }
  }

  /** POST and require a 2xx; a non-2xx body is read and thrown as a classified UpstreamError. */
  async postOk(path: string, body: string, signal: AbortSignal, extraHeaders?: Record<string, string>): Promise<UpstreamResponse> {
    const res = await this.post(path, body, signal, extraHeaders);
    if (res.status >= 200 && res.status < 300) return res;
    throw await this.errorOf(res, signal);
  }

  /** Read a whole 2xx body as bytes. */
  async bytes(res: UpstreamResponse, signal: AbortSignal): Promise<Uint8Array> {
    try {
      return new Uint8Array(await res.body.arrayBuffer());
    } catch (err) {
      throw this.transportError(err, signal);
    }
  }

  /**
   * Decoded text pieces of a streaming body, transport errors mapped. Reads the
   * body with `read()` itself rather than through its async iterator: one
   * generator per stream instead of two (one promise less per network read),
   * and an early exit does not build an AbortError with a stack trace.
   */
  async *text(res: UpstreamResponse, signal: AbortSignal): AsyncGenerator<string> {
    const body = res.body;
    const decoder = new TextDecoder();
    let ended = body.readableEnded;
    let failure: unknown = body.errored ?? undefined;
    let wake: (() => void) | undefined;
    const onReadable = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const onEnd = () => {
      ended = true;
      onReadable();
    };
    const onError = (err: unknown) => {
      failure ??= err;
      onReadable();
    };
    body.on('readable', onReadable);
    body.on('end', onEnd);
    body.on('error', onError);
    try {
      for (;;) {
        let buf: Buffer | null;
        while (failure === undefined && (buf = body.read() as Buffer | null) !== null) yield decoder.decode(buf, STREAM);
        if (failure !== undefined) throw this.transportError(failure, signal);
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      body.off('readable', onReadable);
      body.off('end', onEnd);
      body.off('error', onError);
      if (!ended) {
        // The consumer stopped early (or the body failed): release the socket. A
        // destroy emits 'error', which must find a listener.
        body.on('error', ignore);
        if (!body.destroyed) body.destroy();
      }
    }
    const rest = decoder.decode();
    if (rest) yield rest;
  }

  async errorOf(res: UpstreamResponse, signal: AbortSignal): Promise<Error> {
    let text = '';
    try {
      text = await res.body.text();
    } catch (err) {
      return this.transportError(err, signal);
    }
    return this.mapError(res.status, text, res.headers, this.clock.now());
  }


  /** An aborted attempt reports why it was aborted; anything else is a transport failure. */
  transportError(err: unknown, signal: AbortSignal): Error {
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
