/**
 * Reading a chat stream without a promise per chunk: `read` returns what is
 * ready now, and `wait` resolves (never rejects) when reading again may give
 * more. The server's SSE writer reads a stream so; between two upstream
 * events a stream then holds one pending promise instead of a chain of
 * suspended iterators — with thousands of slow streams, garbage the GC would
 * otherwise copy and promote on every event.
 */
import type { ChatCompletionChunk } from '../protocol/openai.js';

/** `read` has nothing more: the stream is over. */
export const STREAM_END: unique symbol = Symbol('switchyard.streamEnd');

export interface StreamReader {
  /** The next chunk, STREAM_END when the stream is over, null when nothing is ready (await `wait`). Throws the stream's failure, once. */
  read(): ChatCompletionChunk | typeof STREAM_END | null;
  wait(): Promise<void>;
  /**
   * `wait` without a promise: `wake` is called once (never synchronously)
   * when reading again may give more. Between two events a slow stream then
   * holds nothing young for the GC to copy.
   */
  notify?(wake: () => void): void;
  /**
   * The reader cannot take more now (its client's socket is full): until the next `read`,
   * the stream's stall timer may not fire, as while a chunk is held — a slow client is
   * not a stalled upstream.
   */
  pause?(): void;
  /** The reader stops early (client gone): the stream releases its upstream. Idempotent. */
  close(): void;
}
