/**
 * Wire-level helpers for the server tests: the contract's error shape, raw
 * HTTP over node:net, SSE reading.
 */
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';

export interface ErrorShape {
  error: { message: string; type: string; code: string | null; param: string | null };
}

/** True when `body` is exactly the contract's `{"error":{message,type,code,param}}`. */
export function isErrorShape(body: unknown): body is ErrorShape {
  if (typeof body !== 'object' || body === null) return false;
  const e = (body as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return false;
  const { message, type, code, param } = e as Record<string, unknown>;
  return (
    typeof message === 'string' &&
    typeof type === 'string' &&
    (typeof code === 'string' || code === null) &&
    (typeof param === 'string' || param === null) &&
    Object.keys(e).length === 4
  );
}

/** Asserts status, the error shape and its code; returns the error. */
export function expectError(status: number, body: unknown, actualStatus: number, code?: string): ErrorShape['error'] {
  expect(actualStatus, JSON.stringify(body)).toBe(status);
  expect(isErrorShape(body), JSON.stringify(body)).toBe(true);
  const e = (body as ErrorShape).error;
  if (code !== undefined) expect(e.code).toBe(code);
  return e;
}

export interface RawResponse {
  /** 0 when no status line arrived. */
  status: number;
  head: string;
  headers: Record<string, string>;
  body: Buffer;
  /** All bytes received. */
  raw: Buffer;
  /** The socket failed (reset) rather than closing cleanly. */
  error?: string;
  /** The client gave up waiting (idle) or hung up on purpose, rather than the server closing. */
  clientClosed?: boolean;
}

/** In `parts`: hang up here (a client that disconnects mid-request). */
export const HANG_UP = Symbol('hang up');
export type RawPart = string | Buffer | number | typeof HANG_UP;

export interface RawOptions {
  /** Close from the client side after this long without data. Default 3000. */
  idleMs?: number;
  /** Close from the client side as soon as the received text satisfies this (mid-stream disconnect). */
  hangUpWhen?: (received: string) => boolean;
}

/**
 * Writes `parts` to a fresh connection (a number pauses that many ms, HANG_UP
 * closes), then collects everything until the server closes the connection,
 * or the client closes it (idle, or `hangUpWhen`).
 */
export function rawExchange(port: number, parts: RawPart[], opts: RawOptions = {}): Promise<RawResponse> {
  const idleMs = opts.idleMs ?? 3000;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let clientClosed = false;
    const hangUp = () => {
      clientClosed = true;
      socket.destroy();
    };
    const socket: Socket = connect(port, '127.0.0.1');
    let idle = setTimeout(hangUp, idleMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      clearTimeout(idle);
      idle = setTimeout(hangUp, idleMs);
      if (opts.hangUpWhen?.(Buffer.concat(chunks).toString('latin1'))) hangUp();
    });
    socket.on('error', (e) => {
      error = (e as NodeJS.ErrnoException).code ?? e.message;
    });
    socket.on('close', () => {
      clearTimeout(idle);
      resolve({ ...parseRaw(Buffer.concat(chunks), error), clientClosed });
    });
    socket.once('connect', async () => {
      for (const p of parts) {
        if (socket.destroyed) return;
        if (p === HANG_UP) return hangUp();
        if (typeof p === 'number') await new Promise((r) => setTimeout(r, p));
        else socket.write(p);
      }
    });
  });
}

export function parseRaw(raw: Buffer, error?: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = (end === -1 ? raw : raw.subarray(0, end)).toString('latin1');
  const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = end === -1 ? Buffer.alloc(0) : raw.subarray(end + 4);
  const len = headers['content-length'];
  if (len !== undefined) body = body.subarray(0, Number(len));
  return { status: m ? Number(m[1]) : 0, head, headers, body, raw, error };
}

/** The `data:` payloads of an SSE text, in order. */
export function sseData(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split('\n\n')) {
    for (const line of block.split('\n')) if (line.startsWith('data: ')) out.push(line.slice(6));
  }
  return out;
}

/** Reads a fetch/undici body stream until `predicate(textSoFar)` holds; returns the text. */
export async function readUntil(body: AsyncIterable<Uint8Array>, predicate: (text: string) => boolean): Promise<string> {
  const dec = new TextDecoder();
  let text = '';
  for await (const chunk of body) {
    text += dec.decode(chunk, { stream: true });
    if (predicate(text)) return text;
  }
  return text;
}

export const chatBody = (model = 'fast', extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], ...extra });
