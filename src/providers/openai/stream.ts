/**
 * OpenAI-format SSE → ChatCompletionChunk iteration, shared by every
 * OpenAI-compatible upstream (openai, azure, vLLM, LiteLLM, Ollama's /v1...).
 */
import { SseParser } from '../sse.js';
import type { TextSource } from '../http.js';
import { RAW_JSON, type ChunkPull, type ChunkStream, type UpstreamHeaders, type WithRaw } from '../types.js';
import { PULL_END } from '../../core/iterator-pull.js';
import type { ChatCompletionChunk } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { openAIErrorOf } from './errors.js';
import { ChunkTemplate } from './chunk-template.js';

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };

/**
 * `choices` as everything downstream reads it: an array of objects, and a delta's
 * `tool_calls`, when there, an array of objects. A `null` (or an array) in either is a malformed
 * event (counted, skipped), not a crash — nor forwarded to a client SDK that
 * assembles tool calls by index and would throw on it.
 */
function isChoiceList(choices: unknown): boolean {
  if (!Array.isArray(choices)) return false;
  for (let i = 0; i < choices.length; i++) {
    const c: unknown = choices[i];
    // An array is no choice either: it has no `delta` for the client to read.
    if (c === null || typeof c !== 'object' || Array.isArray(c)) return false;
    const calls = (c as { delta?: { tool_calls?: unknown } | null }).delta?.tool_calls;
    if (calls !== undefined && calls !== null && !isObjectList(calls)) return false;
  }
  return true;
}

function isObjectList(list: unknown): boolean {
  if (!Array.isArray(list)) return false;
  for (let i = 0; i < list.length; i++) {
    const v: unknown = list[i];
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  }
  return true;
}
/** The line ends SseParser joins a multi-line event's `data:` lines with. */
const JOINED_LINES = /\n/g;

/** Parsed chunks a stream may spend learning a chunk template before its events count as not alike. */
const LEARN_TRIES = 4;

/**
 * Iterates itself (once): `next` parses what has arrived and awaits only when
 * nothing is left to parse, so a stream between two events holds one pending
 * promise — not a chain of suspended async generators and the last event's
 * objects they still reference (see TextSource).
 */
export class OpenAIChunkStream implements ChunkStream, AsyncIterator<ChatCompletionChunk>, ChunkPull {
  malformed = 0;
  private readonly parser = new SseParser();
  /** Chunks parsed and not yet handed out. */
  private queue: ChatCompletionChunk[] = [];
  private qi = 0;
  private finished = false;
  /** `[DONE]` seen: the rest of the body is read and ignored (the connection stays reusable). */
  private sawDone = false;
  /** Nothing more will be parsed. */
  private over = false;
  /** Thrown once the chunks parsed before it were handed out (an error event, a cut). */
  private failure: Error | undefined;
  private iterated = false;
  /** Learnt from a plain content chunk; builds the ones like it without parsing. */
  private template: ChunkTemplate | undefined;
  /**
   * Parsed chunks left to learn a template from: each parse spends one, each built chunk
   * refills them (a server stamping `created` anew each second still gets a template a
   * second). Once spent, the stream's events are not alike (a member other than the last
   * changing each event, spaced JSON): the template goes and nothing more is tried.
   */
  private learnTries = LEARN_TRIES;

  constructor(
    readonly headers: UpstreamHeaders,
    private readonly src: TextSource,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<ChatCompletionChunk> {
    if (this.iterated) throw new Error('an upstream stream can be iterated once');
    this.iterated = true;
    return this;
  }

  async next(): Promise<IteratorResult<ChatCompletionChunk>> {
    for (;;) {
      const value = this.pull();
      if (value === PULL_END) return DONE;
      if (value !== undefined) return { value, done: false };
      await this.src.wait();
    }
  }

  pull(): ChatCompletionChunk | typeof PULL_END | undefined {
    try {
      for (;;) {
        if (this.qi < this.queue.length) {
          const value = this.queue[this.qi++]!;
          if (this.qi === this.queue.length) {
            this.queue.length = 0;
            this.qi = 0;
          }
          return value;
        }
        if (this.failure !== undefined) {
          const err = this.failure;
          this.failure = undefined;
          throw err;
        }
        if (this.over) return PULL_END;
        const text = this.src.read();
        if (text !== null) {
          if (!this.sawDone && text.length > 0) {
            this.parser.push(text);
            this.take();
          }
        } else if (this.src.done) {
          this.end();
        } else {
          return undefined;
        }
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  ready(): Promise<void> {
    return this.src.wait();
  }

  notify(wake: () => void): void {
    this.src.onChange(wake);
  }

  async return(): Promise<IteratorResult<ChatCompletionChunk>> {
    this.close();
    return DONE;
  }

  /** Parsed events → queued chunks, up to `[DONE]` or an error event (thrown after the chunks before it). */
  private take(): void {
    const events = this.parser.events;
    for (let i = 0; i < events.length && !this.sawDone; i++) {
      const ev = events[i]!;
      const data = ev.data;
      // SSE strips one space after `data:`; a server that writes two still means the end.
      if (data === '[DONE]' || (data.length < 16 && data.trim() === '[DONE]')) {
        this.sawDone = true;
        break;
      }
      let chunk: WithRaw<ChatCompletionChunk> | undefined;
      try {
        chunk = this.parse(data, ev.multiline);
      } catch (err) {
        this.failure = err as Error;
        this.over = true;
        this.src.release();
        break;
      }
      if (chunk === undefined) continue;
      const choices = chunk.choices;
      for (let c = 0; c < choices.length; c++) if (choices[c]!.finish_reason) this.finished = true;
      this.queue.push(chunk);
    }
    events.length = 0;
  }

  /** The body ended: the last event may lack its blank line; a cut before any finish_reason is a failure. */
  private end(): void {
    this.over = true;
    this.src.release();
    if (this.sawDone) return;
    this.parser.end();
    this.take();
    // A clean close after a finish_reason is a finished answer; anything else was cut.
    if (!this.sawDone && !this.finished && this.failure === undefined) {
      this.failure = new UpstreamError({ category: 'network', message: 'upstream stream ended before completion' });
    }
  }

  private close(): void {
    this.over = true;
    this.failure = undefined;
    this.queue.length = 0;
    this.qi = 0;
    this.src.release();
  }

  /**
   * A chunk, or undefined for a malformed event (counted, skipped). Error events throw.
   * `multiline`: the event's JSON came in several `data:` lines, joined with newlines,
   * so its text is forwarded with those newlines as spaces, and is no template's shape.
   */
  private parse(data: string, multiline: boolean): WithRaw<ChatCompletionChunk> | undefined {
    if (this.template !== undefined && !multiline) {
      const built = this.template.build(data);
      if (built !== undefined) {
        this.learnTries = LEARN_TRIES;
        return built;
      }
      if (this.learnTries === 0) this.template = undefined;
    }
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      this.malformed++;
      return undefined;
    }
    if (value === null || typeof value !== 'object') {
      this.malformed++;
      return undefined;
    }
    const obj = value as Record<string, unknown>;
    if (obj.error !== undefined && obj.choices === undefined) {
      const err = openAIErrorOf(obj, this.headers);
      if (err !== undefined) throw err;
    }
    if (!isChoiceList(obj.choices)) {
      this.malformed++;
      return undefined;
    }
    const chunk = obj as unknown as WithRaw<ChatCompletionChunk>;
    if (multiline) {
      // It parsed, so each \n the lines were joined with lies between two tokens (JSON has
      // no raw newline inside a string): as a space the text is the same JSON on one line,
      // relayed as it came. Re-serialised instead, a member nested some thousands deep
      // overflowed JSON.stringify's stack and a healthy stream failed as `stream_error`.
      chunk[RAW_JSON] = data.replace(JOINED_LINES, ' ');
      return chunk;
    }
    if (this.learnTries > 0) {
      this.learnTries--;
      this.template = ChunkTemplate.learn(chunk, data) ?? this.template;
    }
    chunk[RAW_JSON] = data;
    return chunk;
  }
}
