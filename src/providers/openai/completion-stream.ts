/**
 * A stream request answered with one JSON chat completion → the chunks of an
 * OpenAI stream. Some OpenAI-compatible servers (older vLLM builds, proxies in
 * front of a backend that cannot stream, small self-hosted servers) ignore
 * `stream: true` and answer `application/json`. The answer is whole and good,
 * so the client gets it as the stream it asked for: per choice a role chunk,
 * its content, refusal and tool calls (one delta each, with its index), a
 * finish chunk; then the usage chunk when the answer has usage (the executor
 * keeps it for the client only when it asked). Every chunk carries the
 * answer's `id`, `created`, `model` and `system_fingerprint`, as the upstream's
 * own stream would.
 */
import type { ChatCompletion, ChatCompletionChunk, ChunkChoice, ChunkDelta, FinishReason, ToolCallDelta, Usage } from '../../protocol/openai.js';
import { PULL_END } from '../../core/iterator-pull.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { ChunkPull, ChunkStream, UpstreamHeaders } from '../types.js';

/** What a chunk needs when the answer lacks it: the attempt's model and request id, the time. */
export interface CompletionDefaults {
  model: string;
  id: string;
  /** Unix seconds. */
  created: number;
}

type Plain = Record<string, unknown>;

const isObject = (v: unknown): v is Plain => v !== null && typeof v === 'object' && !Array.isArray(v);

const malformed = (what: string) => new UpstreamError({ category: 'server', message: `upstream sent a malformed answer (${what})` });

const JSON_TYPE = /^\s*application\/json\s*(?:;|$)/i;

/** Is a content type (parameters such as `charset` allowed) JSON rather than an event stream? A test, no copy: every stream attempt asks. */
export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && JSON_TYPE.test(contentType);
}

/**
 * The completion's chunks. Throws an UpstreamError `server` (the buffered
 * path's malformed answer) for what no stream could express: a choice or a
 * tool call that is not an object. `usage` is the answer's as its shape scan
 * read it (null: none, or not counts), so only real usage reaches the tally.
 */
export function completionChunks(c: ChatCompletion, usage: Usage | null, d: CompletionDefaults): ChatCompletionChunk[] {
  const id = typeof c.id === 'string' && c.id.length > 0 ? c.id : d.id;
  const created = typeof c.created === 'number' ? c.created : d.created;
  const model = typeof c.model === 'string' && c.model.length > 0 ? c.model : d.model;
  const fingerprint = typeof c.system_fingerprint === 'string' ? c.system_fingerprint : undefined;
  const chunk = (choices: ChunkChoice[]): ChatCompletionChunk => {
    const out: ChatCompletionChunk = { id, object: 'chat.completion.chunk', created, model, choices };
    if (fingerprint !== undefined) out.system_fingerprint = fingerprint;
    return out;
  };

  const out: ChatCompletionChunk[] = [];
  const choices: unknown[] = c.choices;
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i];
    if (!isObject(choice)) throw malformed('a choice that is not an object');
    const index = typeof choice.index === 'number' ? choice.index : i;
    const message = isObject(choice.message) ? choice.message : {};
    const piece = (delta: ChunkDelta, finish: FinishReason | null = null): ChunkChoice => ({ index, delta, finish_reason: finish });

    out.push(chunk([piece({ role: 'assistant', content: '' })]));
    if (typeof message.content === 'string' && message.content.length > 0) {
      const content = piece({ content: message.content });
      if (choice.logprobs != null) content.logprobs = choice.logprobs;
      out.push(chunk([content]));
    }
    if (typeof message.refusal === 'string' && message.refusal.length > 0) out.push(chunk([piece({ refusal: message.refusal })]));
    const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
    for (let k = 0; k < calls.length; k++) out.push(chunk([piece({ tool_calls: [toolCallDelta(calls[k], k)] })]));
    out.push(chunk([piece({}, finishReason(choice.finish_reason, calls.length > 0))]));
  }
  // Only counts the scan read: the tally adds them up for the trace, the cost and the limits.
  if (usage !== null && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') {
    const last = chunk([]);
    last.usage = isObject(c.usage) ? (c.usage as unknown as Usage) : usage;
    out.push(last);
  }
  return out;
}

function toolCallDelta(call: unknown, index: number): ToolCallDelta {
  if (!isObject(call)) throw malformed('a tool call that is not an object');
  const fn = isObject(call.function) ? call.function : {};
  const delta: ToolCallDelta = { index, type: 'function', function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: typeof fn.arguments === 'string' ? fn.arguments : '' } };
  if (typeof call.id === 'string') delta.id = call.id;
  return delta;
}

/**
 * The answer came whole, so it finished: a missing finish_reason (some small
 * servers leave it null) is the one it would have had. A stream without one
 * would read as cut (with `n` > 1, not every choice finished).
 */
function finishReason(given: unknown, toolCalls: boolean): FinishReason {
  if (typeof given === 'string' && given.length > 0) return given as FinishReason;
  return toolCalls ? 'tool_calls' : 'stop';
}

const DONE: IteratorReturnResult<undefined> = { value: undefined, done: true };
const RESOLVED = Promise.resolve();

/** The chunks of an answer already read, as a ChunkStream read pull-style (no promise between chunks). */
export class CompletionChunkStream implements ChunkStream, ChunkPull, AsyncIterator<ChatCompletionChunk> {
  readonly malformed = 0;
  private i = 0;
  private iterated = false;

  constructor(
    readonly headers: UpstreamHeaders,
    private readonly chunks: ChatCompletionChunk[],
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<ChatCompletionChunk> {
    if (this.iterated) throw new Error('an upstream stream can be iterated once');
    this.iterated = true;
    return this;
  }

  pull(): ChatCompletionChunk | typeof PULL_END {
    return this.i < this.chunks.length ? this.chunks[this.i++]! : PULL_END;
  }

  ready(): Promise<void> {
    return RESOLVED;
  }

  notify(wake: () => void): void {
    queueMicrotask(wake);
  }

  next(): Promise<IteratorResult<ChatCompletionChunk>> {
    const value = this.pull();
    return Promise.resolve(value === PULL_END ? DONE : { value, done: false });
  }

  return(): Promise<IteratorResult<ChatCompletionChunk>> {
    this.i = this.chunks.length;
    return Promise.resolve(DONE);
  }
}
