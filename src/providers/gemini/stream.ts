/**
 * Gemini `streamGenerateContent?alt=sse` → ChatCompletionChunk iteration.
 *
 * Each SSE event is a whole GenerateContentResponse fragment: new text parts,
 * complete functionCall parts, a `finishReason` on the last one, and
 * cumulative `usageMetadata`. Per candidate this yields a role chunk first,
 * then thought summaries as `reasoning_content` deltas (present when the request set
 * includeThoughts), text deltas, function calls as complete tool_call deltas, and a finish
 * chunk; after the body ends, one usage-only chunk from the last
 * usageMetadata. The stream counts as finished only when every candidate seen
 * got a finishReason (or the prompt was blocked); a body that just stops is a
 * cut and throws `network`, so the executor can resume or fail over.
 * A candidate that ends empty for a reason that is no answer (MALFORMED_FUNCTION_CALL,
 * OTHER…: map-finish-reason.ts) has its finish held back, as a finish chunk is the
 * executor's commit point: when every candidate ends so, the stream throws `server`
 * (`invalid_request` for MISSING_THOUGHT_SIGNATURE, no-answer.ts) before anything reached
 * the client, and the request fails over; once any candidate answers, or ends as an
 * answer, the held finishes follow as `content_filter`, as does the end of a later one
 * that ends so empty (map-finish-reason.ts says why).
 * As OpenAI's, every chunk has `system_fingerprint` and each choice `logprobs`
 * (null here: Gemini sends neither), and the role chunk `refusal: null`.
 */
import { SseParser } from '../sse.js';
import type { ChunkStream, UpstreamHeaders } from '../types.js';
import type { ChatCompletionChunk, ChunkChoice, ToolCallDelta } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { completionId, partsOf, reasoningOf, textOf, toolCallOf, toUsage } from './convert-response.js';
import { geminiStreamError } from './errors.js';
import { endsWithoutAnswer, mapFinishReason } from './map-finish-reason.js';
import { noAnswerError } from './no-answer.js';
import type { Clock } from '../../core/clock.js';
import type { GeminiUsageMetadata, GenerateContentResponse } from './wire.js';
import { nativeChoice, nativeChunk, roleDelta } from '../native-chunk.js';

interface CandidateState {
  toolCalls: number;
  finished: boolean;
  /** It sent visible text or a function call. */
  answered: boolean;
}

/** A candidate that ended empty for a reason that is no answer, its finish held back (see below). */
interface Held {
  index: number;
  reason: string;
}

export interface GeminiStreamContext {
  model: string;
  requestId: string;
  clock: Clock;
  /** An id for each tool call (Gemini's function calls carry none). */
  newToolId: () => string;
  /** The answers asked for (`n`, Gemini's candidateCount); 1 when unset. */
  choices?: number;
}

export class GeminiChunkStream implements ChunkStream {
  malformed = 0;

  constructor(
    readonly headers: UpstreamHeaders,
    private readonly pieces: AsyncIterable<string>,
    private readonly ctx: GeminiStreamContext,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    const parser = new SseParser();
    const events = parser.events;
    const candidates = new Map<number, CandidateState>();
    let id: string | undefined;
    let model = this.ctx.model;
    const created = Math.floor(this.ctx.clock.now() / 1000);
    let usage: GeminiUsageMetadata | undefined;
    let blocked = false;
    /** Whether an answer came (content, or an end that is one): from then on nothing is held. */
    let settled = false;
    const held: Held[] = [];
    const asked = this.ctx.choices ?? 1;

    const chunk = (choices: ChunkChoice[]): ChatCompletionChunk => nativeChunk(id!, created, model, choices);
    const choice = nativeChoice;

    /** The held finishes, once an answer came; none is held after that. */
    const settle = (out: ChatCompletionChunk[]): void => {
      if (settled) return;
      settled = true;
      for (const h of held.splice(0)) out.push(chunk([choice(h.index, {}, mapFinishReason(h.reason, false, true))]));
    };

    /** Chunks for one upstream event, in order. */
    const convert = (res: GenerateContentResponse): ChatCompletionChunk[] => {
      const out: ChatCompletionChunk[] = [];
      if (id === undefined) {
        id = completionId(res, this.ctx.requestId);
        if (typeof res.modelVersion === 'string' && res.modelVersion) model = res.modelVersion;
      }
      if (res.usageMetadata && typeof res.usageMetadata === 'object') usage = res.usageMetadata;
      const list = Array.isArray(res.candidates) ? res.candidates : [];
      list.forEach((c, pos) => {
        if (!c || typeof c !== 'object') return;
        const index = typeof c.index === 'number' ? c.index : pos;
        let state = candidates.get(index);
        if (!state) {
          state = { toolCalls: 0, finished: false, answered: false };
          candidates.set(index, state);
          out.push(chunk([choice(index, roleDelta())]));
        }
        // Its answer ended at its finishReason: what a server sends for it after that would reach
        // the client behind the finish chunk, which every client takes for the end of the choice.
        if (state.finished) return;
        const parts = partsOf(c);
        // Thought summaries first, as Gemini sends them: progress, but no answer (not `answered`).
        const reasoning = reasoningOf(parts);
        if (reasoning) out.push(chunk([choice(index, { reasoning_content: reasoning })]));
        const text = textOf(parts);
        if (text) out.push(chunk([choice(index, { content: text })]));
        const calls: ToolCallDelta[] = [];
        for (const p of parts) {
          const call = toolCallOf(p, this.ctx.newToolId);
          if (!call) continue;
          calls.push({ index: state.toolCalls++, ...call });
        }
        if (calls.length > 0) out.push(chunk([choice(index, { tool_calls: calls })]));
        if (text || calls.length > 0) {
          state.answered = true;
          settle(out);
        }
        if (typeof c.finishReason === 'string' && c.finishReason) {
          state.finished = true;
          if (!settled && !state.answered && endsWithoutAnswer(c.finishReason)) {
            held.push({ index, reason: c.finishReason });
            // Every answer asked for ended so: fail now, not at the body's end.
            if (held.length >= asked) throw noAnswerError(held.map((h) => h.reason));
            return;
          }
          settle(out);
          out.push(chunk([choice(index, {}, mapFinishReason(c.finishReason, state.toolCalls > 0, !state.answered))]));
        }
      });
      // A blocked prompt arrives as one event with promptFeedback and no candidates. Every
      // answer asked for ends so: with n > 1, one finish alone read as the others cut (a
      // stream_broken, and a breaker failure for the deployment, for the prompt's fault).
      if (list.length === 0 && res.promptFeedback?.blockReason && candidates.size === 0 && !blocked) {
        blocked = true;
        const n = this.ctx.choices ?? 1;
        for (let i = 0; i < n; i++) out.push(chunk([choice(i, roleDelta())]), chunk([choice(i, {}, 'content_filter')]));
      }
      return out;
    };

    const handle = (data: string): ChatCompletionChunk[] => {
      let value: unknown;
      try {
        value = JSON.parse(data);
      } catch {
        this.malformed++;
        return [];
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        this.malformed++;
        return [];
      }
      if ('error' in value) {
        const err = geminiStreamError(data, this.ctx.clock.now(), this.headers);
        if (err) throw err;
      }
      return convert(value as GenerateContentResponse);
    };

    for await (const text of this.pieces) {
      parser.push(text);
      for (let i = 0; i < events.length; i++) yield* handle(events[i]!.data);
      events.length = 0;
    }
    parser.end();
    for (const ev of events) yield* handle(ev.data);

    const finished = blocked || (candidates.size > 0 && [...candidates.values()].every((s) => s.finished));
    if (!finished) throw new UpstreamError({ category: 'network', message: 'upstream stream ended before completion' });
    // Fewer candidates came than were asked for, and each ended without an answer.
    if (!settled && held.length > 0) throw noAnswerError(held.map((h) => h.reason));
    const u = toUsage(usage);
    if (u) yield { ...chunk([]), usage: u };
  }
}
