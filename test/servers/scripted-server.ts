/**
 * The skeleton every loopback provider server shares: a node:http server on
 * 127.0.0.1:0 whose handler gets each request's whole body, a record of
 * requests, a queue of scripted replies, and a `close()` that also drops
 * kept-alive sockets. Plus the small writers the servers answer with. The
 * wire formats themselves stay in each server.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedServer<Rec, Reply> {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  url: string;
  requests: Rec[];
  enqueue(...replies: Reply[]): void;
  close(): Promise<void>;
}

/** What a handler gets besides the request: its body, and the script. */
export interface Exchange<Rec, Reply> {
  body: string;
  record(rec: Rec): void;
  /** The next scripted reply, if any is queued. */
  next(): Reply | undefined;
}

export type ScriptedHandler<Rec, Reply> = (req: IncomingMessage, res: ServerResponse, ex: Exchange<Rec, Reply>) => void | Promise<void>;

/**
 * Start a server; a handler that throws gets `onError` (default: reset the
 * connection, so a broken script fails its test instead of hanging it).
 */
export async function startScriptedServer<Rec, Reply>(
  handle: ScriptedHandler<Rec, Reply>,
  onError: (res: ServerResponse, err: unknown) => void = (res) => void res.destroy(),
): Promise<ScriptedServer<Rec, Reply>> {
  const requests: Rec[] = [];
  const queue: Reply[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      await handle(req, res, { body, record: (rec) => void requests.push(rec), next: () => queue.shift() });
    })().catch((err: unknown) => onError(res, err));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of req) parts.push(b as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** A complete body with its length; `headers` go last, so they may override. */
export function sendText(res: ServerResponse, status: number, contentType: string, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, status, 'application/json', JSON.stringify(body), headers);
}

/** Exact bytes, as a script gives them (no content-length, as a streaming server would). */
export function sendRaw(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType });
  res.end(body);
}

/** One SSE event: `data` is sent as is (already JSON, or `[DONE]`). */
export function sseEvent(data: string, event?: string): string {
  return event ? `event: ${event}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
}

/**
 * Write `frames` (SSE events or NDJSON lines, already encoded), or only the
 * first `cutAfter` of them and then reset the connection: a stream cut mid-body.
 */
export function writeFrames(res: ServerResponse, frames: string[], cutAfter?: number): void {
  const n = cutAfter === undefined ? frames.length : Math.min(cutAfter, frames.length);
  for (let i = 0; i < n; i++) res.write(frames[i]);
  if (cutAfter === undefined) res.end();
  else cut(res);
}

/** Reset the connection once what was written has reached the socket. */
export function cut(res: ServerResponse): void {
  res.flushHeaders();
  const socket = res.socket!;
  socket.write('', () => socket.destroy());
}

/** Streams send text a word at a time, as token deltas would arrive. */
export function words(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/** Tool-call arguments arrive in two pieces, so clients must join them. */
export function halves(s: string): string[] {
  if (s.length < 2) return [s];
  const mid = Math.floor(s.length / 2);
  return [s.slice(0, mid), s.slice(mid)];
}
