/**
 * OpenAI's legacy function calling (`functions`, `function_call`), served by the
 * native adapters (Anthropic, Gemini, Cohere, Ollama), which speak only tools:
 * the request goes to the adapter as the tool request it means, and its answer
 * comes back in the legacy form — `message.function_call` and finish_reason
 * `function_call` buffered, `delta.function_call` pieces streamed — as OpenAI
 * answers such a request. One decorator around each native adapter, so the four
 * convert alike; a request without `functions` or `function_call` pays two
 * field reads. OpenAI-compatible upstreams are not wrapped: they get the request
 * as sent and their answers are forwarded as they came.
 *
 * A legacy answer carries one call. The tool request asks for one where the
 * provider has a switch for it (Anthropic's `disable_parallel_tool_use`); a
 * model that makes several anyway is answered with its first, as a legacy
 * client reads no more.
 */
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, EmbeddingsRequest, FunctionTool, ToolChoice } from '../protocol/openai.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import {
  RAW_JSON,
  type AttemptContext,
  type ChatResult,
  type ChunkStream,
  type EmbeddingsResult,
  type ProviderAdapter,
  type WithRaw,
} from './types.js';
import { ChunkFilterStream } from './chunk-filter.js';

const invalid = (message: string, param: string): UpstreamError => new UpstreamError({ category: 'invalid_request', message, param, unsent: true });

/**
 * The tool request a legacy one means, or undefined when it offers no functions (it is then
 * served as it is). The shapes were checked by protocol/validate.ts; a mix with tools is
 * refused as OpenAI refuses it, rather than guessed at.
 */
export function legacyAsTools(req: ChatRequest): ChatRequest | undefined {
  const functions = req.functions;
  const call = req.function_call;
  const tools = Array.isArray(req.tools) && req.tools.length > 0;
  if (!Array.isArray(functions) || functions.length === 0) {
    // 'none' and 'auto' of no functions mean what no functions mean, as tool_choice does without tools.
    if (call === undefined || call === null || ((call === 'none' || call === 'auto') && !tools)) return undefined;
    throw invalid("function_call is only allowed when functions are specified: with tools, use tool_choice", 'function_call');
  }
  if (tools) throw invalid("functions and tools cannot both be provided: functions are deprecated, offer them all as tools", 'functions');
  if (req.tool_choice !== undefined && req.tool_choice !== null) throw invalid('tool_choice applies to tools: with functions, use function_call', 'tool_choice');
  let choice: ToolChoice | undefined;
  if (call === 'none' || call === 'auto') choice = call;
  else if (call !== undefined && call !== null) {
    const name = call.name;
    if (!functions.some((f) => f.name === name)) throw invalid(`function_call names "${name}", which is not in functions`, 'function_call');
    choice = { type: 'function', function: { name } };
  }
  const offered: FunctionTool[] = functions.map((f) => ({ type: 'function', function: f }));
  return { ...req, functions: undefined, function_call: undefined, tools: offered, tool_choice: choice, parallel_tool_calls: false };
}

/** A converted answer in the legacy form, in place: its first tool call as `function_call`. */
export function toFunctionCallAnswer(res: ChatCompletion): ChatCompletion {
  for (const ch of res.choices) {
    const m = ch.message;
    const first = m.tool_calls?.[0];
    delete m.tool_calls;
    if (first !== undefined) m.function_call = { name: first.function.name, arguments: first.function.arguments };
    if (ch.finish_reason === 'tool_calls') ch.finish_reason = 'function_call';
  }
  return res;
}

/**
 * A converted chunk in the legacy form, in place: the first tool call's pieces (by choice,
 * `first[choice]` its tool index) as `delta.function_call`, the others dropped. False when
 * nothing is left to send (the chunk carried only calls after the first).
 */
export function toFunctionCallChunk(chunk: WithRaw<ChatCompletionChunk>, first: number[]): boolean {
  const choices = chunk.choices;
  let left = choices.length === 0;
  for (const ch of choices) {
    const d = ch.delta;
    const calls = d.tool_calls;
    if (calls !== undefined) {
      delete d.tool_calls;
      for (const c of calls) {
        if (c.index !== (first[ch.index] ??= c.index) || c.function === undefined) continue;
        const piece = (d.function_call ??= {});
        if (c.function.name !== undefined) piece.name = c.function.name;
        if (c.function.arguments !== undefined) piece.arguments = (piece.arguments ?? '') + c.function.arguments;
      }
    }
    if (ch.finish_reason === 'tool_calls') ch.finish_reason = 'function_call';
    if (ch.finish_reason !== null || Object.keys(d).length > 0) left = true;
  }
  delete chunk[RAW_JSON];
  return left;
}

/** A native stream's chunks in the legacy form. */
export class FunctionCallStream extends ChunkFilterStream {
  constructor(inner: ChunkStream) {
    super(inner, toFunctionCallChunk);
  }
}

/** A native adapter that also serves legacy function calling (see above). */
class LegacyFunctionsAdapter implements ProviderAdapter {
  readonly provider: ProviderAdapter['provider'];
  readonly embeddings?: (req: EmbeddingsRequest, ctx: AttemptContext) => Promise<EmbeddingsResult>;
  readonly embeddingBatch?: number;
  readonly adaptTo?: (err: UpstreamError, model: string) => boolean;

  constructor(private readonly inner: ProviderAdapter) {
    this.provider = inner.provider;
    // Absent stays absent: the gateway passes over candidates without embeddings.
    if (inner.embeddings !== undefined) this.embeddings = inner.embeddings.bind(inner);
    if (inner.embeddingBatch !== undefined) this.embeddingBatch = inner.embeddingBatch;
    // The executor asks the adapter it holds, this one: a refusal the inner adapter learns from
    // (Ollama's `think`) would fail over instead of being sent again without the parameter.
    if (inner.adaptTo !== undefined) this.adaptTo = inner.adaptTo.bind(inner);
  }

  chat(req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
    if (req.functions == null && req.function_call == null) return this.inner.chat(req, ctx);
    return legacyChat(this.inner, req, ctx);
  }

  chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    if (req.functions == null && req.function_call == null) return this.inner.chatStream(req, ctx);
    return legacyChatStream(this.inner, req, ctx);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

async function legacyChat(inner: ProviderAdapter, req: ChatRequest, ctx: AttemptContext): Promise<ChatResult> {
  const tools = legacyAsTools(req);
  if (tools === undefined) return inner.chat(req, ctx);
  const result = await inner.chat(tools, ctx);
  toFunctionCallAnswer(result.response);
  return result;
}

async function legacyChatStream(inner: ProviderAdapter, req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
  const tools = legacyAsTools(req);
  if (tools === undefined) return inner.chatStream(req, ctx);
  return new FunctionCallStream(await inner.chatStream(tools, ctx));
}

export function servingLegacyFunctions(adapter: ProviderAdapter): ProviderAdapter {
  return new LegacyFunctionsAdapter(adapter);
}
