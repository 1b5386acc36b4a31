/**
 * Writing a chat stream as Server-Sent Events with backpressure: when the
 * client reads slowly we stop pulling from the upstream (the iterator is not
 * advanced until the socket drains), so memory stays flat.
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

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Returns how the stream ended, for logging: 'done' | 'error' | 'client_gone'. */
export async function writeSse(
  res: ServerResponse,
  stream: { reader: StreamReader },
  meta: RoutingMeta,
): Promise<'done' | 'error' | 'client_gone'> {
  res.writeHead(200, pushRoutingHeaders([...SSE_HEADERS], meta));
  // Routing headers go out with the first chunk, in one write.
  const { reader } = stream;
  // Events read in one go (an upstream read often carries several) leave in
  // one write, as a pass-through proxy sends one write per upstream read: a
  // write per event cost a socket write and an HTTP chunk each. The batch is
  // written before every wait, so no event waits for a later one.
  let batch = '';
  try {
    for (;;) {
      const chunk = reader.read();
      if (chunk === null) {
        if (batch !== '') {
          const ok = res.write(batch);
          batch = '';
          // Slow client: stop pulling until it drains (more may have been read meanwhile: read again).
          if (!ok) {
            await drained(res);
            continue;
          }
        }
        await reader.wait();
        continue;
      }
      if (chunk === STREAM_END) break;
      if (res.destroyed) return 'client_gone';
      const raw = (chunk as WithRaw<ChatCompletionChunk>)[RAW_JSON];
      batch += `data: ${raw ?? JSON.stringify(chunk)}\n\n`;
    }
    if (res.destroyed) return 'client_gone';
    res.end(`${batch}data: [DONE]\n\n`);
    return 'done';
  } catch (err) {
    if (res.destroyed) return 'client_gone';
    const e = err instanceof GatewayError ? err : new GatewayError(502, 'stream_error', 'The stream failed');
    // Events read before the failure first, then an error event, never a silent close: OpenAI SDKs raise it as an APIError.
    res.end(`${batch}data: ${JSON.stringify(e.toBody())}\n\n`);
    return 'error';
  } finally {
    // Stopped early (client gone): the stream releases its upstream. A no-op once it ended.
    reader.close();
  }
}
