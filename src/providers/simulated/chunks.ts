/**
 * The simulated reply as a timed sequence of OpenAI stream chunks, shared by the
 * in-process adapter and the loopback fault server. Chunk times are absolute
 * offsets from when the headers went out (role chunk at once, first piece after
 * ttftMs, then one piece every 1000/tokensPerSecond ms), so a consumer that
 * reads late gets the already "generated" chunks at once, as from a real socket.
 *
 * With `n` > 1 the choices are generated side by side, as OpenAI streams them:
 * one choice per chunk, every choice's role chunk first, then each round of
 * pieces in index order (piece k of every choice is due at the same time), a
 * choice's finish chunk right after its last piece, the usage chunk after all.
 */
import type { Clock } from '../../core/clock.js';
import type { SimulateConfig } from '../../config/types.js';
import type { ChatCompletionChunk, ChunkChoice, ChunkDelta } from '../../protocol/openai.js';
import { SYSTEM_FINGERPRINT, type ReplyMeta, type SimChoice, type SimReply } from './reply.js';
import type { Signal } from '../../core/signal.js';

export interface ChunkOptions {
  /** When the headers were sent (clock ms); chunk times count from here. */
  startAt: number;
  /** OpenAI's `stream_options.include_usage`: `usage: null` on every chunk, then a usage-only chunk. */
  includeUsage: boolean;
  /**
   * Stop after this many content chunks (of all choices together), before the finish chunk
   * that would have ended the answer (a cut stream).
   */
  cutAfter?: number;
  /** After this many content chunks (of all choices together), go silent until aborted (a stalled stream). */
  stallAfter?: number;
}

export type ChunkTiming = Pick<SimulateConfig, 'ttftMs' | 'tokensPerSecond'>;

/** One chunk's choice, and when it is due: `at` for a content piece; others follow the one before at once. */
interface Step {
  choice: ChunkChoice;
  at?: number;
}

export async function* replyChunks(
  reply: SimReply,
  meta: ReplyMeta,
  timing: ChunkTiming,
  clock: Clock,
  signal: Signal,
  opts: ChunkOptions,
): AsyncGenerator<ChatCompletionChunk> {
  const steps = schedule(reply, timing, opts.startAt);
  const content = steps.reduce((n, s) => (s.at === undefined ? n : n + 1), 0);
  const cutAfter = opts.cutAfter === undefined ? undefined : Math.min(opts.cutAfter, content);
  let sent = 0;
  for (const step of steps) {
    if (step.at === undefined) {
      // Every piece sent and the stream to be cut: the finish that would end the answer never comes.
      if (cutAfter !== undefined && sent === content && step.choice.finish_reason !== null) return;
      signal.throwIfAborted();
    } else {
      if (sent === cutAfter) return;
      if (sent === opts.stallAfter) await silence(signal);
      await waitUntil(clock, step.at, signal);
      sent++;
    }
    yield make(meta, [step.choice], opts.includeUsage);
  }
  if (opts.includeUsage) {
    const last = make(meta, [], true);
    last.usage = reply.usage;
    yield last;
  }
}

/** Every chunk's choice in stream order, the choices' pieces interleaved round by round. */
function schedule(reply: SimReply, timing: ChunkTiming, startAt: number): Step[] {
  const interval = timing.tokensPerSecond > 0 ? 1000 / timing.tokensPerSecond : 0;
  const choice = (index: number, delta: ChunkDelta, finish: SimChoice['finishReason'] | null = null): ChunkChoice => ({
    index,
    delta,
    logprobs: null,
    finish_reason: finish,
  });
  const deltas = reply.choices.map(contentDeltas);
  const steps: Step[] = reply.choices.map((c, index) => ({
    choice: choice(index, c.toolCall ? { role: 'assistant', content: null, refusal: null } : { role: 'assistant', content: '', refusal: null }),
  }));
  // A choice with nothing to say (max_tokens 0, a prefill that was the whole answer) ends at once.
  reply.choices.forEach((c, index) => {
    if (deltas[index]!.length === 0) steps.push({ choice: choice(index, {}, c.finishReason) });
  });
  const rounds = Math.max(...deltas.map((d) => d.length));
  for (let k = 0; k < rounds; k++) {
    const at = startAt + timing.ttftMs + k * interval;
    deltas.forEach((d, index) => {
      if (k >= d.length) return;
      steps.push({ choice: choice(index, d[k]!), at });
      if (k === d.length - 1) steps.push({ choice: choice(index, {}, reply.choices[index]!.finishReason) });
    });
  }
  return steps;
}

/** Text pieces one per chunk; a tool call as OpenAI sends it: header, then its arguments. */
function contentDeltas(reply: SimChoice): ChunkDelta[] {
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
