/**
 * Writing responses: JSON bodies, the contract's error shape, and the routing
 * headers every routed response carries.
 */
import type { ServerResponse } from 'node:http';
import type { RoutingMeta } from '../core/request-meta.js';
import { GatewayError } from '../core/errors.js';

export type HeaderMap = Record<string, string | number>;

export function routingHeaders(meta: RoutingMeta): HeaderMap {
  return {
    'x-request-id': meta.requestId,
    'x-switchyard-deployment': meta.deployment,
    'x-switchyard-selection': meta.selection,
    'x-switchyard-attempts': meta.attempts,
    'x-switchyard-fallback': meta.fallback ? 'true' : 'false',
    'x-switchyard-overhead-ms': meta.overheadMs.toFixed(3),
  };
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

export function sendError(res: ServerResponse, err: GatewayError, requestId?: string): void {
  const headers: HeaderMap = {};
  if (requestId) headers['x-request-id'] = requestId;
  if (err.retryAfterS !== undefined) headers['retry-after'] = err.retryAfterS;
  sendJson(res, err.status, err.toBody(), headers);
}

export const internalError = () => new GatewayError(500, 'internal_error', 'Internal gateway error');
