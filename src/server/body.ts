/**
 * Reading a request body: bounded by `maxBodyBytes` (413 as soon as the bound
 * is crossed, declared or not), uncompressed, as content or in transfer (415
 * otherwise, before reading), strict UTF-8, parsed once.
 */
import { isAscii } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { GatewayError, invalidRequest } from '../core/errors.js';
import { rememberRawBody } from '../protocol/raw-body.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../protocol/json-depth.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The client went away before its body arrived: nobody to answer, nothing to log. */
export class ClientGoneError extends Error {
  constructor() {
    super('client closed the connection before the request body arrived');
    this.name = 'ClientGoneError';
  }
}

/** A body being read: kept on the request, so the listeners are shared functions (no closures per request). */
interface BodyRead {
  parts: Buffer[];
  size: number;
  max: number;
  done: boolean;
  resolve(buf: Buffer): void;
  reject(err: Error): void;
}

const kRead = Symbol('switchyard.bodyRead');
/** The response owing a `100 Continue`, until the body is read (see awaitContinue). */
const kContinue = Symbol('switchyard.continue');
type Reading = IncomingMessage & { [kRead]?: BodyRead; [kContinue]?: ServerResponse };

/**
 * `Expect: 100-continue`: the client sends its body only once told to. Told when the body
 * is read, not on arrival: a request refused from its headers (a bad key, an origin, a
 * 415) is answered without the client uploading a body nobody reads.
 */
export function awaitContinue(req: IncomingMessage, res: ServerResponse): void {
  (req as Reading)[kContinue] = res;
}

function onData(this: Reading, buf: Buffer): void {
  const r = this[kRead];
  if (r === undefined || r.done) return; // past the bound: discarding what the client still sends
  r.size += buf.length;
  if (r.size > r.max) {
    // Keep reading, discarding: a client still sending must get to read the
    // 413 (a server that stops reading or resets leaves it blocked or seeing
    // ECONNRESET). The server closes the connection after the answer, lingering
    // (lingerOnClose), and requestTimeout bounds a client that never stops.
    r.done = true;
    r.parts = [];
    r.reject(tooLarge(r.max));
    return;
  }
  r.parts.push(buf);
}

function onEnd(this: Reading): void {
  const r = this[kRead];
  if (r === undefined || r.done) return;
  r.done = true;
  // The request outlives its read (a stream can run for minutes): the record
  // and its bytes go now (the bytes live on only via raw-body.ts).
  this[kRead] = undefined;
  const parts = r.parts;
  r.parts = [];
  r.resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, r.size));
}

/**
 * 'close' before 'end': the body never completed (client gone, lying chunked
 * encoding, request timeout; the parser's 400/408 went out already). After
 * 'end' it is the ordinary close at the end of the exchange: nothing to do.
 */
function onClose(this: Reading): void {
  const r = this[kRead];
  if (r === undefined || r.done) return;
  r.done = true;
  r.reject(new ClientGoneError());
}

export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined) {
    const coding = nonIdentityCoding(encoding);
    if (coding !== undefined) return Promise.reject(unsupportedEncoding(coding));
  }
  const transfer = req.headers['transfer-encoding'];
  // Plain `chunked` (what every client sends) is one comparison; node has already decoded it.
  if (transfer !== undefined && transfer !== 'chunked') {
    const coding = compressingTransferCoding(transfer);
    if (coding !== undefined) return Promise.reject(unsupportedTransfer(coding));
  }
  if (declaredOver(req, maxBytes)) return Promise.reject(tooLarge(maxBytes));
  const owed = (req as Reading)[kContinue];
  if (owed !== undefined) {
    (req as Reading)[kContinue] = undefined;
    owed.writeContinue();
  }
  return new Promise((resolve, reject) => {
    (req as Reading)[kRead] = { parts: [], size: 0, max: maxBytes, done: false, resolve, reject };
    // No 'error' listener: IncomingMessage emits 'error' only to listeners, and 'close' follows it.
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
}

/** How long a connection answered before its body arrived goes on reading what the client still sends. */
export const LINGER_MS = 2000;

/**
 * A lingering close (nginx's lingering_close) for a connection answered before its body
 * arrived (401, 413, 415…), which closes after the answer. node's own close destroys the
 * socket as soon as the answer is written: with body bytes still arriving, the kernel then
 * resets the connection, and a client still uploading saw EPIPE or ECONNRESET instead of
 * the answer (most times for a 5 MB body from another process; the OpenAI SDKs retry that
 * as a connection error, uploading it all again). Here the answer is followed by a FIN,
 * what still arrives is read and dropped, and the socket goes when the client closes its
 * side, or after LINGER_MS. Set once, on a connection that is closing anyway.
 */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = lingeringDestroySoon;
}

function lingeringDestroySoon(this: Socket): void {
  if (this.writable) this.end();
  if (this.destroyed) return;
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  timer.unref();
  this.once('end', this.destroy); // the client closed its side: nothing more will arrive
  this.once('close', () => clearTimeout(timer));
}

/** The declared Content-Length is over `maxBytes` (node's parser has checked it is digits). */
export function declaredOver(req: IncomingMessage, maxBytes: number): boolean {
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) > maxBytes;
}

/**
 * The first coding of a Content-Encoding list other than `identity`. A gzip body
 * read as it stands failed as "not valid UTF-8", which sent clients looking in the
 * wrong place; decompressing instead would need a second bound (a small gzip body
 * inflates to gigabytes) for something no OpenAI SDK sends.
 */
function nonIdentityCoding(header: string): string | undefined {
  for (const part of header.split(',')) {
    const coding = part.trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') return coding;
  }
  return undefined;
}

/**
 * The first transfer coding other than `chunked` and `identity`: `Transfer-Encoding:
 * gzip, chunked`. node's parser takes it (chunked is last, as RFC 9112 asks), undoes the
 * chunking and hands over the still-compressed bytes, which were then read as JSON and
 * refused as "not valid UTF-8" (or, for a coding that leaves text, parsed as if plain).
 */
function compressingTransferCoding(header: string): string | undefined {
  for (const part of header.split(',')) {
    const coding = part.trim().toLowerCase();
    if (coding !== '' && coding !== 'chunked' && coding !== 'identity') return coding;
  }
  return undefined;
}

/**
 * RFC 9112 §6.1 suggests 501 for a transfer coding the server does not implement, but
 * the OpenAI SDKs retry every 5xx: they would upload the same refused body twice more.
 * 415, as for a Content-Encoding, is final for them and says the same thing.
 */
const unsupportedTransfer = (coding: string) =>
  new GatewayError(415, 'unsupported_media_type', `Transfer-Encoding '${coding.slice(0, 40)}' is not supported: the gateway takes uncompressed JSON request bodies (chunked alone is fine)`);

const unsupportedEncoding = (coding: string) =>
  new GatewayError(415, 'unsupported_media_type', `Content-Encoding '${coding.slice(0, 40)}' is not supported: the gateway takes uncompressed JSON request bodies`);

const tooLarge = (max: number) => new GatewayError(413, 'payload_too_large', `Request body exceeds ${max} bytes`);

export function parseJsonBody(buf: Buffer): unknown {
  if (buf.length === 0) throw invalidRequest('Request body is empty: expected JSON');
  let text: string;
  // ASCII is UTF-8 as it stands (and what Python's json.dumps sends by default):
  // one vectorised check and a byte copy, about half a strict decode's cost on a
  // large prompt. Anything else is decoded strictly.
  if (isAscii(buf)) text = buf.toString('latin1');
  else {
    try {
      text = utf8.decode(buf);
    } catch {
      throw invalidRequest('Request body is not valid UTF-8');
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // V8's message quotes the input around the error position: cap it, the body may be huge.
    throw invalidRequest(`Malformed JSON: ${(err as Error).message.slice(0, 200)}`);
  }
  // Each level takes an opening and a closing byte: a body this short cannot nest that deep (no walk needed).
  if (buf.length > 2 * MAX_JSON_DEPTH && nestsDeeperThan(value)) throw invalidRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (value !== null && typeof value === 'object') rememberRawBody(value, buf, text);
  return value;
}
