/**
 * The upstream HTTP client every adapter shares: one undici keep-alive Pool per
 * provider origin, built once. Turns transport failures and non-2xx answers into
 * UpstreamErrors, and an aborted attempt into the abort's own reason (which the
 * executor set: attempt timeout, TTFT, stall, deadline or client gone).
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { errorFromResponse, errorFromTransport } from '../resilience/classify.js';
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
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

export class HttpUpstream {
  private readonly pool: Pool;
  /** Path prefix of the base URL, e.g. `/v1` for `https://api.openai.com/v1`. */
  readonly basePath: string;
  private readonly headers: Record<string, string>;
  private readonly clock: Clock;

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

  /** Decoded text pieces of a streaming body, transport errors mapped. */
  async *text(res: UpstreamResponse, signal: AbortSignal): AsyncGenerator<string> {
    const decoder = new TextDecoder();
    try {
      for await (const buf of res.body) yield decoder.decode(buf as Uint8Array, { stream: true });
    } catch (err) {
      throw this.transportError(err, signal);
    } finally {
      // An early return (the consumer stopped) must release the socket.
      if (!res.body.destroyed) res.body.destroy();
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
    return errorFromResponse(res.status, text, res.headers, this.clock.now());
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
