/**
 * Ollama NDJSON chat stream → OpenAI chunks: a role chunk, `message.thinking` as
 * `reasoning_content` deltas, content deltas,
 * tool calls (Ollama sends each whole, never in pieces), a finish chunk, then a
 * usage-only chunk. Only a line with `done: true` finishes a stream; ending
 * without one is a cut (`network`). An `{"error": ...}` line fails the stream.
 * As OpenAI's, every chunk has `system_fingerprint` and each choice `logprobs`
 * (null here: Ollama sends neither), and the role chunk `refusal: null`.
 */
import { NdjsonParser } from '../sse.js';
import type { UpstreamHeaders } from '../types.js';
import { TranslatedChunkStream, type StreamTranslator } from '../translated-stream.js';
import type { ChatCompletionChunk, ChunkChoice, ChunkDelta, FinishReason, Usage } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { categorizeWithoutStatus } from '../../resilience/classify.js';
import { mapOllamaDoneReason, ollamaToolCalls, ollamaUsage } from './response.js';
import type { OllamaChatResponse } from './wire.js';
import { nativeChoice, nativeChunk, roleDelta } from '../native-chunk.js';

export class OllamaChunkStream extends TranslatedChunkStream<string> {
  constructor(headers: UpstreamHeaders, pieces: AsyncIterable<string>, model: string, created: number, id: string, newToolId: () => string) {
    super(headers, pieces, new NdjsonParser(), new OllamaTranslator(model, created, id, newToolId), 'ollama stream ended before done');
  }
}

/** Stateful line → chunk translation; `push` returns 1 for a malformed line. */
export class OllamaTranslator implements StreamTranslator<string> {
  finished = false;
  /** An error line: thrown once the chunks before it have been yielded. */
  error: UpstreamError | undefined;
  private roleSent = false;
  private toolCount = 0;

  constructor(
    private readonly model: string,
    private readonly created: number,
    private readonly id: string,
    private readonly newToolId: () => string,
  ) {}

  /** Finished or failed: an Ollama stream ends with its `done` line. */
  get done(): boolean {
    return this.finished || this.error !== undefined;
  }

  push(line: string, out: ChatCompletionChunk[]): number {
    let r: OllamaChatResponse;
    try {
      r = JSON.parse(line) as OllamaChatResponse;
    } catch {
      return 1;
    }
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return 1;
    if (typeof r.error === 'string') {
      // The line has no status of its own: its words say what it is (a context overflow fails over to a larger model).
      this.error = new UpstreamError({ category: categorizeWithoutStatus(r.error), message: r.error });
      return 0;
    }
    if (typeof r.done !== 'boolean') return 1;

    const msg = r.message;
    if (msg && typeof msg === 'object') {
      if (typeof msg.thinking === 'string' && msg.thinking.length > 0) this.emit(out, { reasoning_content: msg.thinking });
      if (typeof msg.content === 'string' && msg.content.length > 0) {
        this.emit(out, { content: msg.content });
      }
      const calls = ollamaToolCalls(msg.tool_calls, this.newToolId);
      if (calls) {
        const base = this.toolCount;
        this.toolCount += calls.length;
        this.emit(out, { tool_calls: calls.map((c, i) => ({ index: base + i, id: c.id, type: 'function', function: c.function })) });
      }
    }
    if (r.done) {
      this.finished = true;
      const reason = this.toolCount > 0 ? 'tool_calls' : mapOllamaDoneReason(r.done_reason);
      this.emit(out, {}, reason);
      const usage = ollamaUsage(r);
      if (usage) out.push(this.chunk([], usage));
    }
    return 0;
  }

  private emit(out: ChatCompletionChunk[], delta: ChunkDelta, finish: FinishReason | null = null): void {
    if (!this.roleSent) {
      this.roleSent = true;
      out.push(this.chunk([nativeChoice(0, roleDelta())]));
    }
    out.push(this.chunk([nativeChoice(0, delta, finish)]));
  }

  private chunk(choices: ChunkChoice[], usage?: Usage): ChatCompletionChunk {
    return nativeChunk(this.id, this.created, this.model, choices, usage);
  }
}
