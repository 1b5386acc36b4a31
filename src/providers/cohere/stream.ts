/**
 * Cohere v2 chat SSE (`message-start`, `content-*`, `tool-plan-delta`,
 * `tool-call-*`, `message-end`, then `data: [DONE]`) → OpenAI chunks: a role
 * chunk, a reasoning model's thinking as `reasoning_content` deltas, content and tool-call
 * deltas, a finish chunk, then a usage-only chunk.
 * Only `message-end` finishes a stream; ending without it is a cut (`network`), and
 * one whose finish_reason is `ERROR` (the generation failed) fails it as its error says.
 * As OpenAI's, every chunk has `system_fingerprint` and each choice `logprobs`
 * (null here: Cohere sends neither), and the role chunk `refusal: null`.
 */
import { SseParser, type SseEvent } from '../sse.js';
import type { UpstreamHeaders } from '../types.js';
import { TranslatedChunkStream, type StreamTranslator } from '../translated-stream.js';
import type { ChatCompletionChunk, ChunkChoice, ChunkDelta, FinishReason, Usage } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { cohereGenerationError, cohereUsage, mapCohereFinishReason, stringOr } from './response.js';
import type { CohereStreamEvent } from './wire.js';
import { nativeChoice, nativeChunk, roleDelta } from '../native-chunk.js';

/** `fallbackId`: used until `message-start` names the message; `newToolId`: for a tool call that came without one. */
export class CohereChunkStream extends TranslatedChunkStream<SseEvent> {
  constructor(headers: UpstreamHeaders, pieces: AsyncIterable<string>, model: string, created: number, fallbackId: string, newToolId: () => string) {
    super(headers, pieces, new SseParser(), new CohereTranslator(model, created, fallbackId, newToolId), 'cohere stream ended before message-end');
  }
}

/** Stateful event → chunk translation; `push` returns 1 for a malformed event. */
export class CohereTranslator implements StreamTranslator<SseEvent> {
  finished = false;
  /** `[DONE]` seen, or a failed generation's end: nothing more to read. */
  done = false;
  /** A `message-end` saying the generation failed: thrown once the chunks before it have been yielded. */
  error: UpstreamError | undefined;
  private id: string;
  private roleSent = false;
  private toolCount = 0;
  /** Cohere's event index → OpenAI tool_calls index. */
  private readonly toolIndex = new Map<number, number>();
  private thinkingBlocks: Set<number> | undefined;

  constructor(
    private readonly model: string,
    private readonly created: number,
    fallbackId: string,
    private readonly newToolId: () => string,
  ) {
    this.id = fallbackId;
  }

  push(ev: SseEvent, out: ChatCompletionChunk[]): number {
    if (ev.data === '[DONE]') {
      this.done = true;
      return 0;
    }
    let e: CohereStreamEvent;
    try {
      e = JSON.parse(ev.data) as CohereStreamEvent;
    } catch {
      return 1;
    }
    if (e === null || typeof e !== 'object') return 1;
    const type = typeof e.type === 'string' ? e.type : ev.event;
    if (type === undefined) return 1;
    if (this.finished) return 0;
    const msg = e.delta?.message;
    switch (type) {
      case 'message-start':
        if (typeof e.id === 'string' && e.id) this.id = e.id;
        this.role(out);
        return 0;
      case 'content-start':
        if (msg?.content?.type === 'thinking' && typeof e.index === 'number') {
          (this.thinkingBlocks ??= new Set()).add(e.index);
          return this.reasoning(msg.content.thinking, out);
        }
        return this.text(msg?.content?.text, out);
      case 'content-delta':
        if (typeof e.index === 'number' && this.thinkingBlocks?.has(e.index)) return this.reasoning(msg?.content?.thinking, out);
        return this.text(msg?.content?.text, out);
      case 'tool-call-start': {
        const call = msg?.tool_calls;
        if (!call || typeof call !== 'object') return 1;
        const index = this.toolCount++;
        if (typeof e.index === 'number') this.toolIndex.set(e.index, index);
        this.emit(out, {
          tool_calls: [
            {
              index,
              id: typeof call.id === 'string' && call.id ? call.id : this.newToolId(),
              type: 'function',
              // Strings, as the buffered answer's: a client appends each delta's arguments to a string.
              function: { name: stringOr(call.function?.name), arguments: stringOr(call.function?.arguments) },
            },
          ],
        });
        return 0;
      }
      case 'tool-call-delta': {
        const args = msg?.tool_calls?.function?.arguments;
        if (typeof args !== 'string') return 1;
        if (args.length === 0) return 0;
        const index = (typeof e.index === 'number' ? this.toolIndex.get(e.index) : undefined) ?? this.toolCount - 1;
        if (index < 0) return 1;
        this.emit(out, { tool_calls: [{ index, function: { arguments: args } }] });
        return 0;
      }
      case 'message-end': {
        // A generation that failed upstream ends so, with what it made so far: no answer, so not
        // a clean `stop` (the client took a cut-short text for the whole one) but a failure,
        // which fails over before the first token and breaks or resumes the stream after it.
        const failed = cohereGenerationError(e.delta?.finish_reason, e.delta?.error);
        if (failed) {
          this.error = failed;
          this.done = true;
          return 0;
        }
        this.finished = true;
        this.emit(out, {}, mapCohereFinishReason(e.delta?.finish_reason));
        const usage = cohereUsage(e.delta?.usage);
        if (usage) out.push(this.chunk([], usage));
        return 0;
      }
      default:
        // content-end, tool-plan-delta (the model's plan, not its answer),
        // tool-call-end, citations, debug: nothing to forward.
        return 0;
    }
  }

  private text(text: unknown, out: ChatCompletionChunk[]): number {
    if (text === undefined) return 0;
    if (typeof text !== 'string') return 1;
    if (text.length > 0) this.emit(out, { content: text });
    return 0;
  }

  /** A reasoning model's thinking, as reasoning_content beside the answer. */
  private reasoning(thinking: unknown, out: ChatCompletionChunk[]): number {
    if (thinking === undefined) return 0;
    if (typeof thinking !== 'string') return 1;
    if (thinking.length > 0) this.emit(out, { reasoning_content: thinking });
    return 0;
  }

  private role(out: ChatCompletionChunk[]): void {
    if (this.roleSent) return;
    this.roleSent = true;
    out.push(this.chunk([nativeChoice(0, roleDelta())]));
  }

  private emit(out: ChatCompletionChunk[], delta: ChunkDelta, finish: FinishReason | null = null): void {
    this.role(out);
    out.push(this.chunk([nativeChoice(0, delta, finish)]));
  }

  private chunk(choices: ChunkChoice[], usage?: Usage): ChatCompletionChunk {
    return nativeChunk(this.id, this.created, this.model, choices, usage);
  }
}
