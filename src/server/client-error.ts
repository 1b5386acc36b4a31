/**
 * What to answer when node's HTTP parser gives up on a connection (bad request
 * line, oversized headers, lying chunked body, request/headers timeout): the
 * contract's error JSON on a raw response, then close. Mirrors node's default
 * handler, which answers the same statuses with an empty body.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../core/errors.js';
import { rawErrorResponse } from './respond.js';

// Built once: these are the answers to garbage, which may arrive at garbage rates.
const HEADERS_TOO_LARGE = rawErrorResponse(431, 'Request Header Fields Too Large', new GatewayError(431, 'headers_too_large', 'Request headers are too large'));
const REQUEST_TIMEOUT = rawErrorResponse(408, 'Request Timeout', new GatewayError(408, 'request_timeout', 'The request was not received in time'));
const BAD_REQUEST = rawErrorResponse(400, 'Bad Request', new GatewayError(400, 'invalid_request', 'Malformed HTTP request'));

export function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // node's private field for the response in progress on this socket; its own
  // default handler checks it the same way: once a response has started, bytes
  // written here would corrupt it.
  const active = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || active?.headersSent) {
    socket.destroy();
    return;
  }
  const response = err.code === 'HPE_HEADER_OVERFLOW' ? HEADERS_TOO_LARGE : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? REQUEST_TIMEOUT : BAD_REQUEST;
  // Destroy once the answer is handed to the kernel: the server keeps sockets
  // half-open (allowHalfOpen), so a client that never closes would hold this one.
  socket.end(response, () => socket.destroy());
}
