/**
 * The simulated reply as a timed sequence of OpenAI stream chunks, shared by the
 * in-process adapter and the loopback fault server. Chunk times are absolute
 * offsets from when the headers went out (role chunk at once, first piece after
 * ttftMs, then one piece every 1000/tokensPerSecond ms), so a consumer that
 * reads late gets the already "generated" chunks at once, as from a real socket.
 */
import type { Clock } from '../../core/clock.js';
import type { SimulateConfig } from '../../config/types.js';
import type { ChatCompletionChunk, ChunkDelta, FinishReason } from '../../protocol/openai.js';
import { SYSTEM_FINGERPRINT, type ReplyMeta, type SimReply } from './reply.js';
import type { Signal } from '../../core/signal.js';

export interface ChunkOptions {
  /** When the headers were sent (clock ms); chunk times count from here. */
  startAt: number;
  /** OpenAI's `stream_options.include_usage`: `usage: null` on every chunk, then a usage-only chunk. */
  includeUsage: boolean;
  /** Stop after this many content chunks, before the finish chunk (a cut stream). */
  cutAfter?: number;
  /** After this many content chunks, go silent until aborted (a stalled stream). */
  stallAfter?: number;
}

export type ChunkTiming = Pick<SimulateConfig, 'ttftMs' | 'tokensPerSecond'>;

export async function* replyChunks(
  reply: SimReply,
  meta: ReplyMeta,
  timing: ChunkTiming,
  clock: Clock,
  signal: Signal,
  opts: ChunkOptions,
): AsyncGenerator<ChatCompletionChunk> {
  const interval = timing.tokensPerSecond > 0 ? 1000 / timing.tokensPerSecond : 0;
  const chunk = (delta: ChunkDelta, finish: FinishReason | null = null): ChatCompletionChunk =>
    make(meta, [{ index: 0, delta, logprobs: null, finish_reason: finish }], opts.includeUsage);

  signal.throwIfAborted();
  yield chunk(reply.toolCall ? { role: 'assistant', content: null, refusal: null } : { role: 'assistant', content: '', refusal: null });

  const deltas = contentDeltas(reply);
  const total = opts.cutAfter === undefined ? deltas.length : Math.min(opts.cutAfter, deltas.length);
  for (let i = 0; i < total; i++) {
    if (i === opts.stallAfter) await silence(signal);
    await waitUntil(clock, opts.startAt + timing.ttftMs + i * interval, signal);
    yield chunk(deltas[i]!);
  }
  if (opts.cutAfter !== undefined) return;

  signal.throwIfAborted();
  yield chunk({}, reply.finishReason);
  if (opts.includeUsage) {
    const last = make(meta, [], true);
    last.usage = reply.usage;
    yield last;
  }
}

/** Text pieces one per chunk; a tool call as OpenAI sends it: header, then its arguments. */
function contentDeltas(reply: SimReply): ChunkDelta[] {
  const tc = reply.toolCall;
  if (tc) {
    return [
      { tool_calls: [{ index: 0, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: tc.function.arguments } }] },
    ];
  }
  return reply.pieces.map((content) => ({ content }));
}

function make(meta: ReplyMeta, choices: ChatCompletionChunk['choices'], includeUsage: boolean): ChatCompletionChunk {
  const c: ChatCompletionChunk = {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices,
  };
  if (includeUsage) c.usage = null;
  return c;
}

async function waitUntil(clock: Clock, at: number, signal: Signal): Promise<void> {
  const ms = at - clock.now();
  // No timer for a due chunk: a virtual clock would otherwise need a tick per chunk.
  if (ms > 0) await clock.sleep(ms, signal);
  else signal.throwIfAborted();
}

/** Nothing more, ever: only the consumer giving up (the signal) ends it. */
function silence(signal: Signal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
