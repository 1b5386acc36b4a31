/**
 * The read loop of a native stream translated item by item (Cohere's SSE events,
 * Ollama's NDJSON lines): parse what arrived, feed each item to the translator,
 * yield the chunks it made, throw its error once the chunks before it are out,
 * and stop reading when it says nothing more will come. A stream that ends
 * without its wire's last word (`finished`) was cut: `network`, so the
 * executor can resume or fail it over. The parser and translator come with the
 * stream, made by the adapter: a stream is read once, as its body is.
 *
 * Anthropic's and Gemini's streams keep their own loops: theirs hold state this
 * one has no place for (a pull-based reader; candidates held back until an answer).
 */
import type { ChatCompletionChunk } from '../protocol/openai.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import type { ChunkStream, UpstreamHeaders } from './types.js';

/** An incremental parser whose complete items are appended to `items` (SseParser, NdjsonParser). */
export interface ItemParser<Item> {
  readonly items: Item[];
  push(text: string): void;
  end(): void;
}

/** Stateful item → chunk translation. */
export interface StreamTranslator<Item> {
  /** The wire's last word arrived: the stream is whole. */
  readonly finished: boolean;
  /** Nothing more to read (the wire's end, or a failure). */
  readonly done: boolean;
  /** A failure the stream reported: thrown once the chunks before it have been yielded. */
  readonly error: UpstreamError | undefined;
  /** Appends the item's chunks to `out`; returns 1 for a malformed item, else 0. */
  push(item: Item, out: ChatCompletionChunk[]): number;
}

export class TranslatedChunkStream<Item> implements ChunkStream {
  malformed = 0;

  constructor(
    readonly headers: UpstreamHeaders,
    private readonly pieces: AsyncIterable<string>,
    private readonly parser: ItemParser<Item>,
    private readonly translator: StreamTranslator<Item>,
    /** The `network` error's message when the stream ends before `finished`. */
    private readonly cutMessage: string,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    const t = this.translator;
    const parser = this.parser;
    const items = parser.items;
    const out: ChatCompletionChunk[] = [];
    for await (const text of this.pieces) {
      parser.push(text);
      for (let i = 0; i < items.length && !t.done; i++) this.malformed += t.push(items[i]!, out);
      items.length = 0;
      for (let i = 0; i < out.length; i++) yield out[i]!;
      out.length = 0;
      if (t.error) throw t.error;
      if (t.done) break;
    }
    if (!t.done) {
      parser.end();
      for (let i = 0; i < items.length && !t.done; i++) this.malformed += t.push(items[i]!, out);
      for (const c of out) yield c;
      if (t.error) throw t.error;
    }
    if (!t.finished) throw new UpstreamError({ category: 'network', message: this.cutMessage });
  }
}
