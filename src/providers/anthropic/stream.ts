/**
 * Anthropic Messages SSE → OpenAI ChatCompletionChunk iteration.
 *
 * Event flow (anthropic-version 2023-06-01): `message_start`, then per content
 * block `content_block_start` / `content_block_delta`… / `content_block_stop`,
 * then `message_delta` (stop_reason, cumulative usage) and `message_stop`;
 * `ping` anywhere, `error` instead of the rest. Output, in OpenAI's order: a
 * role chunk, text as `delta.content`, each tool_use block as a `tool_calls`
 * entry (index = the tool's ordinal; the first delta carries id, type, name and
 * arguments ''), one finish chunk, then a usage-only chunk (`choices: []`).
 * As OpenAI's, every chunk has `system_fingerprint` and each choice `logprobs`
 * (null here: Anthropic has neither), and the role chunk `refusal: null`.
 *
 * Thinking blocks' `thinking_delta`s go out as `delta.reasoning_content` (their
 * signatures, and redacted_thinking's encrypted data, have no OpenAI form). Citations
 * and server-tool blocks have none either and are skipped. Unknown event types are skipped too (Anthropic adds them over time);
 * unparsable ones are counted in `malformed`.
 */
import { SseParser } from '../sse.js';
import type { ChunkStream, UpstreamHeaders } from '../types.js';
import type { ChatCompletionChunk, ChunkDelta, FinishReason } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { overlap, stringOr, toUsage } from './convert-response.js';
import { anthropicStreamError } from './errors.js';
import { mapStopReason } from './map-stop-reason.js';
import type { AnthropicUsage } from './wire.js';
import { toolArgumentsJson } from '../tool-arguments.js';
import { nativeChoice, nativeChunk, roleDelta } from '../native-chunk.js';

/** Block kinds by content-block index: a tool's ordinal (≥ 0), text, thinking, or skipped. */
const TEXT = -1;
const SKIPPED = -2;
const THINKING = -3;

type Json = Record<string, unknown>;

export class AnthropicChunkStream implements ChunkStream {
  malformed = 0;

  /** message_start's, else the `asked` ones. */
  private id: string;
  private model: string;
  private usage: AnthropicUsage = {};
  private readonly kinds: number[] = [];
  private tools = 0;
  private finished = false;
  private stopped = false;
  /** Whitespace the client already has from the prefill; dropped if the model repeats it. */
  private pendingTrim: string;
  /** Chunks produced by the current network read, drained by the iterator. */
  private readonly out: ChatCompletionChunk[] = [];
  /** Per tool call (by ordinal): some of its arguments went out. */
  private readonly argsSent: boolean[] = [];

  /**
   * @param created the `created` stamp of every chunk (seconds)
   * @param prefillTrim see ConvertedRequest.prefillTrim
   * @param asked the id and model the chunks carry until message_start names the upstream's:
   *   a server that sends none (or one without them) still names the model that served, as
   *   every chunk must
   */
  constructor(
    readonly headers: UpstreamHeaders,
    private readonly pieces: AsyncIterable<string>,
    private readonly created: number,
    prefillTrim = '',
    asked: { id: string; model: string } = { id: '', model: '' },
  ) {
    this.pendingTrim = prefillTrim;
    this.id = asked.id;
    this.model = asked.model;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    const parser = new SseParser();
    const out = this.out;
    for await (const text of this.pieces) {
      parser.push(text);
      const failure = this.drain(parser);
      // Chunks converted before an error event still reach the client first.
      for (let i = 0; i < out.length; i++) yield out[i]!;
      out.length = 0;
      if (failure !== undefined) throw failure;
      if (this.stopped) return;
    }
    parser.end();
    const failure = this.drain(parser);
    // A clean close after the stop_reason is a finished answer; anything else was cut.
    if (failure === undefined && !this.stopped && this.finished) this.stop();
    for (const chunk of out) yield chunk;
    out.length = 0;
    if (failure !== undefined) throw failure;
    if (!this.stopped) {
      throw new UpstreamError({ category: 'network', message: 'anthropic stream ended before message_stop' });
    }
  }

  /** Convert the parsed events into `out`; an error event stops it and is returned. */
  private drain(parser: SseParser): UpstreamError | undefined {
    const events = parser.events;
    try {
      for (let i = 0; i < events.length && !this.stopped; i++) this.handle(events[i]!.data);
      return undefined;
    } catch (err) {
      return err as UpstreamError;
    } finally {
      events.length = 0;
    }
  }

  private handle(data: string): void {
    let ev: Json;
    try {
      ev = JSON.parse(data) as Json;
    } catch {
      this.malformed++;
      return;
    }
    if (ev === null || typeof ev !== 'object' || typeof ev.type !== 'string') {
      this.malformed++;
      return;
    }
    switch (ev.type) {
      case 'content_block_delta':
        return this.blockDelta(ev);
      case 'content_block_start':
        return this.blockStart(ev);
      case 'message_start':
        return this.messageStart(ev);
      case 'message_delta':
        return this.messageDelta(ev);
      case 'content_block_stop':
        return this.blockStop(ev);
      case 'message_stop':
        return this.stop();
      case 'error':
        throw anthropicStreamError(data, this.headers);
      default:
        // ping, and event types added after this was written.
        return;
    }
  }

  private messageStart(ev: Json): void {
    const msg = ev.message as Json | undefined;
    if (msg === undefined || msg === null || typeof msg !== 'object') {
      this.malformed++;
      return;
    }
    if (typeof msg.id === 'string' && msg.id) this.id = msg.id;
    if (typeof msg.model === 'string' && msg.model) this.model = msg.model;
    this.mergeUsage(msg.usage);
    this.emit(roleDelta());
  }

  private blockStart(ev: Json): void {
    const index = ev.index;
    const block = ev.content_block as Json | undefined;
    if (typeof index !== 'number' || block === undefined || block === null || typeof block !== 'object') {
      this.malformed++;
      return;
    }
    if (block.type === 'text') {
      this.kinds[index] = TEXT;
      if (typeof block.text === 'string' && block.text) this.text(block.text);
    } else if (block.type === 'tool_use') {
      const ordinal = this.tools++;
      this.kinds[index] = ordinal;
      // Anthropic sends `input: {}` here and the JSON in deltas; a server that
      // sends the whole input up front still yields the right arguments.
      const input = block.input;
      const full = input !== null && typeof input === 'object' && Object.keys(input).length > 0;
      this.argsSent[ordinal] = full;
      this.emit({
        tool_calls: [
          {
            index: ordinal,
            id: stringOr(block.id),
            type: 'function',
            function: { name: stringOr(block.name), arguments: full ? toolArgumentsJson(input) : '' },
          },
        ],
      });
    } else if (block.type === 'thinking') {
      this.kinds[index] = THINKING;
      if (typeof block.thinking === 'string' && block.thinking) this.emit({ reasoning_content: block.thinking });
    } else {
      this.kinds[index] = SKIPPED;
    }
  }

  private blockDelta(ev: Json): void {
    const index = ev.index;
    const delta = ev.delta as Json | undefined;
    if (typeof index !== 'number' || delta === undefined || delta === null || typeof delta !== 'object') {
      this.malformed++;
      return;
    }
    const kind = this.kinds[index];
    if (delta.type === 'text_delta') {
      if (kind === TEXT && typeof delta.text === 'string') this.text(delta.text);
    } else if (delta.type === 'thinking_delta') {
      if (kind === THINKING && typeof delta.thinking === 'string' && delta.thinking) this.emit({ reasoning_content: delta.thinking });
    } else if (delta.type === 'input_json_delta') {
      if (kind !== undefined && kind >= 0 && typeof delta.partial_json === 'string' && delta.partial_json) {
        this.argsSent[kind] = true;
        this.emit({ tool_calls: [{ index: kind, function: { arguments: delta.partial_json } }] });
      }
    }
    // signature_delta, citations_delta: no OpenAI form.
  }

  /**
   * A tool call whose block ends without any input JSON takes no arguments: `{}`, as the
   * buffered answer says, where an empty string would fail the client's JSON.parse.
   */
  private blockStop(ev: Json): void {
    const kind = typeof ev.index === 'number' ? this.kinds[ev.index] : undefined;
    if (kind === undefined || kind < 0 || this.argsSent[kind]) return;
    this.argsSent[kind] = true;
    this.emit({ tool_calls: [{ index: kind, function: { arguments: '{}' } }] });
  }

  private text(text: string): void {
    if (this.pendingTrim) {
      const n = overlap(text, this.pendingTrim);
      this.pendingTrim = n === text.length ? this.pendingTrim.slice(n) : '';
      text = text.slice(n);
    }
    if (text) this.emit({ content: text });
  }

  private messageDelta(ev: Json): void {
    this.mergeUsage(ev.usage);
    const reason = (ev.delta as Json | undefined)?.stop_reason;
    if (typeof reason === 'string' && !this.finished) this.finish(mapStopReason(reason));
  }

  private finish(reason: FinishReason): void {
    this.finished = true;
    this.out.push(this.chunk({}, reason));
  }

  private stop(): void {
    if (!this.finished) this.finish('stop');
    this.stopped = true;
    this.out.push(nativeChunk(this.id, this.created, this.model, [], toUsage(this.usage)));
  }

  /** message_delta usage is cumulative: its non-null counts replace message_start's. */
  private mergeUsage(u: unknown): void {
    if (u === null || typeof u !== 'object') return;
    for (const [k, v] of Object.entries(u as Json)) if (typeof v === 'number') this.usage[k] = v;
  }

  private emit(delta: ChunkDelta): void {
    this.out.push(this.chunk(delta, null));
  }

  private chunk(delta: ChunkDelta, finish: FinishReason | null): ChatCompletionChunk {
    return nativeChunk(this.id, this.created, this.model, [nativeChoice(0, delta, finish)]);
  }
}
