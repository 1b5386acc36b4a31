/**
 * Writing a chat stream as Server-Sent Events with backpressure: when the
 * client reads slowly we stop pulling from the upstream (the iterator is not
 * advanced until the socket drains), so memory stays flat. Meanwhile the
 * stream's stall timer waits too (a slow client is not a stalled upstream), and
 * a client that takes nothing at all for `sendTimeoutMs` is gone, as nginx's
 * send_timeout has it: its socket is closed and its upstream released.
 */
import type { ServerResponse } from 'node:http';
import type { ChatCompletionChunk } from '../protocol/openai.js';
import { RAW_JSON, type WithRaw } from '../providers/types.js';
import { GatewayError } from '../core/errors.js';
import { STREAM_END, type StreamReader } from '../core/stream-reader.js';
import type { RoutingMeta } from '../core/request-meta.js';
import { pushRoutingHeaders } from './respond.js';

// No `connection` header: node writes keep-alive itself, or close while shutting down.
const SSE_HEADERS = ['content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'x-accel-buffering', 'no'] as const;

/** Returns how the stream ended, for logging: 'done' | 'error' | 'client_gone'. */
export function writeSse(
  res: ServerResponse,
  stream: { reader: StreamReader },
  meta: RoutingMeta,
  sendTimeoutMs = 0,
): Promise<SseEnd> {
  res.writeHead(200, pushRoutingHeaders([...SSE_HEADERS], meta));
  // Routing headers go out with the first chunk, in one write.
  flattenHead(res);
  return new Promise((resolve) => new SseWriter(res, stream.reader, resolve, sendTimeoutMs).pump());
}

type SseEnd = 'done' | 'error' | 'client_gone';

/**
 * node:http builds the response head by concatenation and keeps it on the
 * response (`_header`, internal but long-stable) for the response's life: a
 * tree of ~45 small string objects a stream, copied by every young-generation
 * GC it lives through and ~1.1 KB each once promoted. Reading one character
 * makes V8 flatten it in place into one string. A no-op where node keeps no
 * such string.
 */
function flattenHead(res: ServerResponse): void {
  const head = (res as { _header?: unknown })._header;
  if (typeof head === 'string') head.charCodeAt(0);
}

/**
 * One stream's pump: reads what is ready, writes it, and between two events
 * registers itself (one bound function per stream) with the reader instead of
 * awaiting a promise — with thousands of slow streams, each wait's promise
 * and reaction outlived a young-generation cycle and were copied by the GC.
 */
class SseWriter {
  /**
   * Events read in one go (an upstream read often carries several) leave in
   * one write, as a pass-through proxy sends one write per upstream read: a
   * write per event cost a socket write and an HTTP chunk each. The batch is
   * written before every wait, so no event waits for a later one.
   */
  private batch = '';
  private over = false;
  readonly pump = (): void => {
    try {
      this.step();
    } catch (err) {
      this.fail(err);
    }
  };

  constructor(
    private readonly res: ServerResponse,
    private readonly reader: StreamReader,
    private readonly resolve: (end: SseEnd) => void,
    /** 0: no bound. */
    private readonly sendTimeoutMs: number,
  ) {}

  private step(): void {
    const { res, reader } = this;
    if (this.over) return;
    for (;;) {
      const chunk = reader.read();
      if (chunk === null) {
        if (this.batch !== '') {
          const ok = res.write(this.batch);
          this.batch = '';
          // Slow client: stop pulling until it drains (more may have been read meanwhile: read again).
          if (!ok) return this.awaitDrain();
        }
        if (reader.notify !== undefined) reader.notify(this.pump);
        else void reader.wait().then(this.pump, (err: unknown) => this.fail(err));
        return;
      }
      if (chunk === STREAM_END) break;
      if (res.destroyed) return this.finish('client_gone');
      const raw = (chunk as WithRaw<ChatCompletionChunk>)[RAW_JSON];
      this.batch += `data: ${raw ?? JSON.stringify(chunk)}\n\n`;
    }
    if (res.destroyed) return this.finish('client_gone');
    res.end(`${this.batch}data: [DONE]\n\n`);
    this.finish('done');
  }

  /**
   * Until the client has read what was written: the stream's stall timer paused, and the
   * socket's idle timeout armed — node destroys a socket whose timeout nobody handles,
   * which closes the response and so releases the stream as the client gone.
   */
  private awaitDrain(): void {
    const { res } = this;
    this.reader.pause?.();
    const socket = this.sendTimeoutMs > 0 ? res.socket : null;
    socket?.setTimeout(this.sendTimeoutMs);
    whenDrained(res, () => {
      // Back to the server's own setting for a response in progress (none).
      socket?.setTimeout(0);
      this.pump();
    });
  }

  private fail(err: unknown): void {
    if (this.over) return;
    const res = this.res;
    if (res.destroyed) return this.finish('client_gone');
    try {
      const e = err instanceof GatewayError ? err : new GatewayError(502, 'stream_error', 'The stream failed');
      // Events read before the failure first, then an error event, never a silent close: OpenAI SDKs raise it as an APIError.
      res.end(`${this.batch}data: ${JSON.stringify(e.toBody())}\n\n`);
    } catch {
      res.destroy();
    }
    this.finish('error');
  }

  private finish(end: SseEnd): void {
    this.over = true;
    this.batch = '';
    try {
      // Stopped early (client gone): the stream releases its upstream. A no-op once it ended.
      this.reader.close();
    } catch {
      // Over either way. Nothing may escape the pump: it runs from a promise reaction or an
      // event, where a throw is an unhandled rejection or an uncaught exception.
    }
    this.resolve(end);
  }
}

/** Calls `then` once the client has read what was written (or left). */
function whenDrained(res: ServerResponse, then: () => void): void {
  const done = () => {
    res.off('drain', done);
    res.off('close', done);
    then();
  };
  res.on('drain', done);
  res.on('close', done);
}
