/**
 * A native stream whose chunks are rewritten in place, some dropped: the legacy
 * function_call form (legacy-functions.ts) and one tool call a turn (first-tool-call.ts).
 * `step` edits a chunk and says whether anything is left to send; `first` is its state
 * across the stream, by choice the index of the first tool call seen.
 */
import type { ChatCompletionChunk } from '../protocol/openai.js';
import type { ChunkStream, UpstreamHeaders, WithRaw } from './types.js';

export type ChunkStep = (chunk: WithRaw<ChatCompletionChunk>, first: number[]) => boolean;

export class ChunkFilterStream implements ChunkStream {
  constructor(
    private readonly inner: ChunkStream,
    private readonly step: ChunkStep,
  ) {}

  get headers(): UpstreamHeaders {
    return this.inner.headers;
  }

  get malformed(): number {
    return this.inner.malformed;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    const first: number[] = [];
    for await (const chunk of this.inner) if (this.step(chunk, first)) yield chunk;
  }
}
