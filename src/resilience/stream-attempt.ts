/**
 * A streamed attempt up to its commit point. Nothing reaches the client until
 * the first real content (text, tool or function call, refusal, or a finish): role-only
 * chunks and keep-alives are held back, so any failure before that point is an
 * ordinary fail-over and the client never sees a half-started answer.
 */
import { performance } from 'node:perf_hooks';
import type { ChatCompletionChunk, ChatRequest } from '../protocol/openai.js';
import { RAW_JSON, type ChunkStream, type WithRaw } from '../providers/types.js';
import type { AttemptInput } from './executor.js';
import { UpstreamError } from './upstream-error.js';

export interface Committed {
  stream: ChunkStream;
  iterator: AsyncIterator<ChatCompletionChunk>;
  /** Chunks held back until the commit point, the committing one last. */
  pending: ChatCompletionChunk[];
  ttftMs: number;
}

/**
 * What an attempt may hold back before its commit point. A real stream holds a role chunk,
 * or a model's reasoning (`reasoning_content` deltas) until its answer starts: within any
 * first-token timeout, thousands of chunks, never these. An upstream flooding chunks with no
 * content (a role-only chunk, over and over) was held until the first-token timer fired:
 * 170 MB a second over loopback, gigabytes at the default 20 s.
 */
export const MAX_HELD_CHUNKS = 100_000;
/**
 * The same bound on their text: an OpenAI-format chunk's whole JSON, a native adapter's
 * reasoning (the one text a chunk before the commit point carries: Anthropic's thinking,
 * Gemini's thoughts, Ollama's and Cohere's thinking), which a model may run on for as long.
 */
export const MAX_HELD_CHARS = 32 * 1024 * 1024;

/**
 * The reasoning a chunk carries, in characters: `reasoning_content` (the native adapters',
 * DeepSeek's, vLLM's), or `reasoning` (OpenRouter's).
 */
function reasoningChars(chunk: ChatCompletionChunk): number {
  let n = 0;
  const choices = chunk.choices;
  for (let i = 0; i < choices.length; i++) {
    const d = choices[i]!.delta as (ChatCompletionChunk['choices'][number]['delta'] & { reasoning?: unknown }) | undefined;
    const r = d?.reasoning_content ?? d?.reasoning;
    if (typeof r === 'string') n += r.length;
  }
  return n;
}

export function isCommitChunk(chunk: ChatCompletionChunk): boolean {
  const choices = chunk.choices;
  for (let i = 0; i < choices.length; i++) {
    const c = choices[i]!;
    const d = c.delta;
    if (c.finish_reason) return true;
    // A legacy function_call is the answer as a tool call is (an OpenAI upstream's, or a native's converted).
    if (d && ((typeof d.content === 'string' && d.content.length > 0) || (d.tool_calls && d.tool_calls.length > 0) || d.refusal || d.function_call)) return true;
  }
  return false;
}

/**
 * `counts`: the request's tally of malformed upstream events, which an attempt that fails
 * before its commit point adds its own to (a committed one's are added when it closes).
 */
export async function openUntilCommit(input: AttemptInput, req: ChatRequest, requestId: string, counts: { malformedEvents: number }): Promise<Committed> {
  const d = input.candidate.deployment;
  const { ttftTimeoutMs, requestTimeoutMs } = d.timeouts;
  // One timer for the pre-commit phase: whichever limit is nearer. The request
  // deadline is enforced by the parent signal; a timer racing it would read as an upstream timeout.
  const ttft = ttftTimeoutMs <= requestTimeoutMs;
  const limit = ttft ? ttftTimeoutMs : requestTimeoutMs;
  /** When the first-token limit armed here fires (epoch ms); reasoning only ever moves it later. */
  let ttftAt: number | undefined;
  if (limit < input.remainingMs) {
    if (ttft) {
      input.scope.arm(limit, 'ttft');
      ttftAt = input.scope.clock.now() + limit;
    } else input.scope.arm(limit, 'attempt_timeout');
  }
  const t0 = performance.now();
  const stream = await input.adapter.chatStream(req, { signal: input.scope.signal, model: d.model, requestId });
  input.trace.status = 200;
  // The head's rate-limit headers pace the requests sent while this stream runs (a burst of
  // streams), not only those sent after it ends, which may be minutes away.
  input.lease?.learn(stream.headers);
  const iterator = stream[Symbol.asyncIterator]();
  const pending: ChatCompletionChunk[] = [];
  let heldChars = 0;
  let thinking = false;
  // A throw here has already released the upstream socket (the adapter's generator finally).
  try {
    for (;;) {
      const r = await iterator.next();
      if (r.done) {
        // Ended cleanly (an OpenAI-format `[DONE]`) before any content, call, refusal or finish:
        // no answer, as a native adapter's empty candidate is. Committed, the client got an empty
        // 200 while another candidate could have answered, and a resume's continuation that said
        // nothing ended the answer as if complete.
        throw new UpstreamError({ category: 'server', message: 'upstream ended its stream without an answer' });
      }
      pending.push(r.value);
      if (isCommitChunk(r.value)) break;
      const reasoning = reasoningChars(r.value);
      if (reasoning > 0) {
        // A model that streams its thinking has started answering: the first-token limit is for an
        // upstream that has not (a thinking model's answer may come minutes in, and failing it over
        // threw that thinking away, again and again). From here a pause in the thinking is what
        // fails it, as a stall does after the first token; the request's deadline still bounds it.
        // An attempt timeout nearer than the first-token limit stays: it bounds the attempt as configured.
        // So does the first-token limit while it ends after a stall would (an idleTimeoutMs below it):
        // reasoning holds the attempt longer, never shorter.
        if (thinking) input.scope.refresh();
        else if (
          (ttft || limit >= input.remainingMs) &&
          d.timeouts.idleTimeoutMs < input.remainingMs &&
          (ttftAt === undefined || input.scope.clock.now() + d.timeouts.idleTimeoutMs >= ttftAt)
        ) {
          thinking = true;
          input.scope.arm(d.timeouts.idleTimeoutMs, 'idle', 'upstream stopped reasoning before its first token');
        }
      }
      // A native adapter's chunk has no upstream text: its reasoning is what it holds.
      heldChars += (r.value as WithRaw<ChatCompletionChunk>)[RAW_JSON]?.length ?? reasoning;
      if (pending.length > MAX_HELD_CHUNKS || heldChars > MAX_HELD_CHARS) {
        await iterator.return?.();
        throw new UpstreamError({ category: 'server', message: `upstream sent ${pending.length} chunks (${heldChars} characters) without content before its first token` });
      }
    }
  } catch (err) {
    // The attempt fails before its commit: its malformed events are counted here or nowhere.
    counts.malformedEvents += stream.malformed;
    throw err;
  }
  const ttftMs = Math.round((performance.now() - t0) * 1000) / 1000;
  input.trace.ttftMs = ttftMs;
  return { stream, iterator, pending, ttftMs };
}
