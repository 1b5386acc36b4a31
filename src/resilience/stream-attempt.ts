/**
 * A streamed attempt up to its commit point. Nothing reaches the client until
 * the first real content (text, tool call, refusal, or a finish): role-only
 * chunks and keep-alives are held back, so any failure before that point is an
 * ordinary fail-over and the client never sees a half-started answer.
 */
import { performance } from 'node:perf_hooks';
import type { ChatCompletionChunk, ChatRequest } from '../protocol/openai.js';
import type { ChunkStream } from '../providers/types.js';
import type { AttemptInput } from './executor.js';

export interface Committed {
  stream: ChunkStream;
  iterator: AsyncIterator<ChatCompletionChunk>;
  /** Chunks held back until the commit point, the committing one last. */
  pending: ChatCompletionChunk[];
  ttftMs: number;
  /** The upstream finished before or at the commit point. */
  ended: boolean;
}

export function isCommitChunk(chunk: ChatCompletionChunk): boolean {
  const choices = chunk.choices;
  for (let i = 0; i < choices.length; i++) {
    const c = choices[i]!;
    const d = c.delta;
    if (c.finish_reason) return true;
    if (d && ((typeof d.content === 'string' && d.content.length > 0) || (d.tool_calls && d.tool_calls.length > 0) || d.refusal)) return true;
  }
  return false;
}

export async function openUntilCommit(input: AttemptInput, req: ChatRequest, requestId: string): Promise<Committed> {
  const d = input.candidate.deployment;
  const { ttftTimeoutMs, requestTimeoutMs } = d.timeouts;
  // One timer for the pre-commit phase: whichever limit is nearer. The request
  // deadline is enforced by the parent signal; a timer racing it would read as an upstream timeout.
  const ttft = ttftTimeoutMs <= requestTimeoutMs;
  const limit = ttft ? ttftTimeoutMs : requestTimeoutMs;
  if (limit < input.remainingMs) {
    if (ttft) input.scope.arm(limit, 'ttft');
    else input.scope.arm(limit, 'attempt_timeout');
  }
  const t0 = performance.now();
  const stream = await input.adapter.chatStream(req, { signal: input.scope.signal, model: d.model, requestId });
  input.trace.status = 200;
  const iterator = stream[Symbol.asyncIterator]();
  const pending: ChatCompletionChunk[] = [];
  let ended = false;
  // A throw here has already released the upstream socket (the adapter's generator finally).
  for (;;) {
    const r = await iterator.next();
    if (r.done) {
      ended = true;
      break;
    }
    pending.push(r.value);
    if (isCommitChunk(r.value)) break;
  }
  const ttftMs = Math.round((performance.now() - t0) * 1000) / 1000;
  input.trace.ttftMs = ttftMs;
  return { stream, iterator, pending, ttftMs, ended };
}
