/**
 * What to answer when node's HTTP parser gives up on a connection (bad request
 * line, oversized headers, lying chunked body, request/headers timeout), and the
 * requests node would otherwise answer itself (an HTTP/1.1 request without Host,
 * an Expect other than 100-continue, CONNECT): the contract's error JSON, then
 * close. node's own answers have an empty body, or for CONNECT none at all.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../core/errors.js';
import { lingerOnClose } from './body.js';
import { rawErrorResponse, sendError } from './respond.js';

// Built once: these are the answers to garbage, which may arrive at garbage rates.
const HEADERS_TOO_LARGE = rawErrorResponse(431, 'Request Header Fields Too Large', new GatewayError(431, 'headers_too_large', 'Request headers are too large'));
const REQUEST_TIMEOUT = rawErrorResponse(408, 'Request Timeout', new GatewayError(408, 'request_timeout', 'The request was not received in time'));
const BAD_REQUEST = rawErrorResponse(400, 'Bad Request', new GatewayError(400, 'invalid_request', 'Malformed HTTP request'));
/**
 * A client that set HTTPS_PROXY (or a proxy setting) to the gateway asks it for a tunnel.
 * node, without a 'connect' listener, destroyed the socket: the client saw "socket hang
 * up" and no hint of what it did wrong.
 */
const CONNECT_REFUSED = rawErrorResponse(
  405,
  'Method Not Allowed',
  new GatewayError(405, 'method_not_allowed', 'CONNECT is not supported: the gateway is not a proxy; send requests to its routes, such as POST /v1/chat/completions'),
  'allow: GET, HEAD, POST\r\n',
);

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

export function onConnect(_req: IncomingMessage, socket: Duplex): void {
  // node took its own listeners off the socket when it handed it over: without this, a
  // client that resets the connection under the answer was an uncaught 'error' (a crash).
  socket.on('error', destroySocket);
  socket.end(CONNECT_REFUSED, () => socket.destroy());
}

function destroySocket(this: Duplex): void {
  this.destroy();
}

const CLOSE = { connection: 'close' } as const;

/** `Expect` with something other than 100-continue: RFC 9110 §10.1.1's 417, as node answers it, with a body that says why. */
export function onUnmetExpectation(req: IncomingMessage, res: ServerResponse): void {
  answerBeforeRouting(req, res, new GatewayError(417, 'expectation_failed', "Only 'Expect: 100-continue' is supported"));
}

/**
 * An HTTP/1.1 request without Host, which RFC 9112 §3.2 has servers refuse with 400. node's
 * own check (requireHostHeader) is turned off for this answer: an empty 400 told a
 * hand-written client nothing.
 */
export function isMissingHost(req: IncomingMessage): boolean {
  return req.headers.host === undefined && req.httpVersionMinor === 1 && req.httpVersionMajor === 1;
}

export function answerMissingHost(req: IncomingMessage, res: ServerResponse): void {
  answerBeforeRouting(req, res, new GatewayError(400, 'invalid_request', 'HTTP/1.1 requests need a Host header'));
}

/** As the parser's answers: no request id (there is no routed request), and the connection closed, lingering for a body still arriving. */
function answerBeforeRouting(req: IncomingMessage, res: ServerResponse, err: GatewayError): void {
  lingerOnClose(req.socket);
  sendError(res, err, undefined, CLOSE);
}
