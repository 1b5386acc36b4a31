/**
 * OpenAI-format SSE → ChatCompletionChunk iteration, shared by every
 * OpenAI-compatible upstream (openai, azure, vLLM, LiteLLM, Ollama's /v1...).
 */
import { SseParser } from '../sse.js';
import { RAW_JSON, type ChunkStream, type UpstreamHeaders, type WithRaw } from '../types.js';
import type { ChatCompletionChunk } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { categorize, parseErrorBody } from '../../resilience/classify.js';

export class OpenAIChunkStream implements ChunkStream {
  malformed = 0;

  constructor(
    readonly headers: UpstreamHeaders,
    private readonly pieces: AsyncIterable<string>,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    const parser = new SseParser();
    const events = parser.events;
    let finished = false;
    let done = false;
    for await (const text of this.pieces) {
      // After [DONE] only the body's end is left (normally in the same read):
      // reading to it, rather than returning, keeps the connection reusable.
      if (done) continue;
      parser.push(text);
      for (let i = 0; i < events.length; i++) {
        const data = events[i]!.data;
        if (data === '[DONE]') {
          done = true;
          break;
        }
        const chunk = this.parse(data);
        if (chunk === undefined) continue;
        const choices = chunk.choices;
        for (let c = 0; c < choices.length; c++) if (choices[c]!.finish_reason) finished = true;
        yield chunk;
      }
      events.length = 0;
    }
    if (done) return;
    parser.end();
    for (const ev of events) {
      if (ev.data === '[DONE]') return;
      const chunk = this.parse(ev.data);
      if (chunk === undefined) continue;
      if (chunk.choices.some((c) => c.finish_reason)) finished = true;
      yield chunk;
    }
    // A clean close after a finish_reason is a finished answer; anything else was cut.
    if (!finished) {
      throw new UpstreamError({ category: 'network', message: 'upstream stream ended before completion' });
    }
  }

  /** A chunk, or undefined for a malformed event (counted, skipped). Error events throw. */
  private parse(data: string): WithRaw<ChatCompletionChunk> | undefined {
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
      const parsed = parseErrorBody(data);
      const status = typeof (obj.error as { code?: unknown })?.code === 'number' ? ((obj.error as { code: number }).code) : 500;
      throw new UpstreamError({
        category: categorize(status, `${parsed.code ?? ''} ${parsed.message}`),
        message: parsed.message,
        providerCode: parsed.code,
      });
    }
    if (!Array.isArray(obj.choices)) {
      this.malformed++;
      return undefined;
    }
    const chunk = obj as unknown as WithRaw<ChatCompletionChunk>;
    chunk[RAW_JSON] = data;
    return chunk;
  }
}
