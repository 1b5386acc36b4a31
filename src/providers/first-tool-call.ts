/**
 * `parallel_tool_calls: false` — at most one tool call a turn — for the native providers that
 * have no switch for it. Anthropic has one (`disable_parallel_tool_use`); Gemini's
 * `functionCallingConfig` takes only a mode and the names allowed, Cohere's v2 chat only
 * `tool_choice` (REQUIRED, NONE) and `strict_tools`, Ollama's `/api/chat` no tool option at
 * all. A client that asked for one call runs what it gets, so the rule is kept on the
 * answer: a choice's first call stays and later ones are dropped, buffered and streamed.
 * finish_reason stays `tool_calls` and usage is the upstream's (the dropped calls were
 * generated, and billed). A request that did not ask pays one field read: its stream is
 * the adapter's own, not wrapped.
 */
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../protocol/openai.js';
import { ChunkFilterStream } from './chunk-filter.js';
import { RAW_JSON, type ChunkStream, type WithRaw } from './types.js';

/** The request allows one call a turn and offers tools to call (none offered, none come). */
export function oneToolCallAsked(req: ChatRequest): boolean {
  return req.parallel_tool_calls === false && Array.isArray(req.tools) && req.tools.length > 0;
}

/** A converted answer with each choice's later calls dropped, in place. */
export function keepFirstToolCall(res: ChatCompletion): ChatCompletion {
  for (const ch of res.choices) {
    const calls = ch.message.tool_calls;
    if (calls !== undefined && calls.length > 1) calls.length = 1;
  }
  return res;
}

/**
 * A converted chunk with every tool-call delta but the first call's dropped, in place (by
 * choice, `first[choice]` the first call's index, as the adapter numbered it). A choice left
 * with nothing to say is dropped; false when the chunk then carries no choice (nothing to send:
 * it held only a later call's pieces).
 */
export function keepFirstToolCallChunk(chunk: WithRaw<ChatCompletionChunk>, first: number[]): boolean {
  const choices = chunk.choices;
  let emptied = false;
  for (const ch of choices) {
    const d = ch.delta;
    const calls = d.tool_calls;
    if (calls === undefined || calls.length === 0) continue;
    const keep = (first[ch.index] ??= calls[0]!.index);
    if (calls.every((c) => c.index === keep)) continue;
    delete chunk[RAW_JSON];
    const kept = calls.filter((c) => c.index === keep);
    if (kept.length > 0) d.tool_calls = kept;
    else {
      delete d.tool_calls;
      if (ch.finish_reason === null && Object.keys(d).length === 0) emptied = true;
    }
  }
  if (!emptied) return true;
  chunk.choices = choices.filter((ch) => ch.finish_reason !== null || Object.keys(ch.delta).length > 0);
  return chunk.choices.length > 0;
}

/** A native stream's chunks with each choice's first tool call only. */
export class FirstToolCallStream extends ChunkFilterStream {
  constructor(inner: ChunkStream) {
    super(inner, keepFirstToolCallChunk);
  }
}

/** `stream` held to one call when the request asked for that, else `stream` itself. */
export function firstToolCallOf(req: ChatRequest, stream: ChunkStream): ChunkStream {
  return oneToolCallAsked(req) ? new FirstToolCallStream(stream) : stream;
}
