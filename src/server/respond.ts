/**
 * Writing responses: JSON bodies, the contract's error shape, and the routing
 * headers every routed response carries.
 */
import type { ServerResponse } from 'node:http';
import type { RoutingMeta } from '../core/request-meta.js';
import { GatewayError } from '../core/errors.js';

export type HeaderMap = Record<string, string | number>;

/**
 * Model and provider names come from the config and may hold characters a
 * header cannot (writeHead would throw, turning every answer for that alias
 * into a 500): those values go out percent-encoded. One regex test per value.
 */
const NOT_HEADER_SAFE = /[^\t\x20-\x7e]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/**
 * encodeURI, not encodeURIComponent: `PROVIDER/MODEL` keeps its `/` (and every other
 * printable ASCII character) so a reader can still split it. A lone surrogate, which
 * a client can pin in a model name and which makes encodeURI throw, is replaced first.
 */
export const headerSafe = (v: string): string => (NOT_HEADER_SAFE.test(v) ? encodeURI(v.replace(LONE_SURROGATE, '\ufffd')) : v);

/**
 * `ms` with three decimals, as `toFixed(3)` writes it for the gateway's own
 * overhead (a few ms at most), without its runtime call (~200 ns against ~60
 * here, on every routed response). Halves round up (toFixed rounds the
 * binary value: 1.2345 may read 1.234 there and 1.235 here, a difference no
 * reader of the header can see).
 */
export function fixed3(ms: number): string {
  if (!(ms >= 0 && ms < 1e9)) return ms.toFixed(3);
  const m = Math.round(ms * 1000);
  const whole = Math.floor(m / 1000);
  const frac = m - whole * 1000;
  return `${whole}${frac < 10 ? '.00' : frac < 100 ? '.0' : '.'}${frac}`;
}

/** A header list as `writeHead` takes it flat (name, value, name, value…): no header object per response. */
export type HeaderList = (string | number)[];

/** Appends the routing headers to `head`. */
export function pushRoutingHeaders(head: HeaderList, meta: RoutingMeta): HeaderList {
  head.push(
    'x-request-id',
    meta.requestId,
    'x-switchyard-deployment',
    headerSafe(meta.deployment),
    'x-switchyard-selection',
    headerSafe(meta.selection),
    'x-switchyard-attempts',
    meta.attempts,
    'x-switchyard-fallback',
    meta.fallback ? 'true' : 'false',
    'x-switchyard-overhead-ms',
    fixed3(meta.overheadMs),
  );
  return head;
}

/** A routed 200: the JSON payload with the routing headers. */
export function sendRouted(res: ServerResponse, payload: string | Uint8Array, meta: RoutingMeta): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
  res.writeHead(200, pushRoutingHeaders(['content-type', 'application/json', 'content-length', length], meta));
  res.end(payload);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers?: HeaderMap): void {
  sendRaw(res, status, JSON.stringify(body), headers);
}

export function sendRaw(res: ServerResponse, status: number, payload: string | Uint8Array, headers?: HeaderMap, contentType = 'application/json'): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {
    'content-type': contentType,
    'content-length': typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength,
    ...headers,
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, err: GatewayError, requestId?: string, extra?: HeaderMap): void {
  const headers: HeaderMap = { ...extra };
  if (requestId) headers['x-request-id'] = requestId;
  if (err.routing) {
    // Routed, then failed: no deployment served, but the attempts and the gateway's own time are known.
    headers['x-switchyard-attempts'] = err.routing.attempts;
    headers['x-switchyard-overhead-ms'] = fixed3(err.routing.overheadMs);
  }
  if (err.retryAfterS !== undefined) headers['retry-after'] = Math.max(0, Math.ceil(err.retryAfterS));
  sendJson(res, err.status, err.toBody(), headers);
}

export const internalError = () => new GatewayError(500, 'internal_error', 'Internal gateway error');

/** A complete raw HTTP/1.1 error response, for sockets the HTTP parser gave up on; `extraHeaders` as CRLF-ended lines. */
export function rawErrorResponse(status: number, reason: string, err: GatewayError, extraHeaders = ''): string {
  const body = JSON.stringify(err.toBody());
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extraHeaders}connection: close\r\n\r\n${body}`;
}
