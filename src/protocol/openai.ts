/**
 * OpenAI Chat Completions / Embeddings wire types: the one language spoken inside
 * the gateway. Every provider adapter converts to and from these shapes.
 *
 * Requests keep unknown fields (`[key: string]: unknown`) because an
 * OpenAI-compatible upstream may understand parameters we do not model; native
 * adapters simply ignore what they cannot map.
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** Parts we do not convert (audio, files) are carried through for OpenAI-compatible upstreams. */
export interface OtherPart {
  type: string;
  [key: string]: unknown;
}

export type ContentPart = TextPart | ImagePart | OtherPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** OpenAI's legacy (deprecated) function calling: a function offered in `functions`. */
export interface LegacyFunction {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** A legacy call, as an answer carries it in `message.function_call` (and in pieces in `delta.function_call`). */
export interface FunctionCall {
  name: string;
  arguments: string;
}

export type ToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { type: 'function'; function: { name: string } };

export interface ResponseFormat {
  /** OpenAI's three, and two OpenAI-compatible servers' own (vLLM's and SGLang's, Fireworks'): what validation lets through. */
  type: 'text' | 'json_object' | 'json_schema' | 'structural_tag' | 'grammar';
  json_schema?: { name: string; schema?: Record<string, unknown>; strict?: boolean; description?: string };
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  /** Only on a stream (validation refuses it otherwise, as OpenAI does). */
  stream_options?: { include_usage?: boolean | null; include_obfuscation?: boolean | null } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  seed?: number | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean | null;
  logprobs?: boolean | null;
  /** 0–20; above 0 only with `logprobs: true`. */
  top_logprobs?: number | null;
  /** Token ids to biases of −100..100. */
  logit_bias?: Record<string, number> | null;
  modalities?: string[] | null;
  functions?: LegacyFunction[] | null;
  function_call?: 'none' | 'auto' | { name: string } | null;
  response_format?: ResponseFormat | null;
  user?: string | null;
  /** OpenAI's values: none, minimal, low, medium, high, xhigh (checked as a string: the list grows). Native adapters map it (providers/reasoning-effort.ts). */
  reasoning_effort?: string | null;
  [key: string]: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  completion_tokens_details?: Record<string, unknown>;
  /** Of the prompt tokens, those written to the prompt cache (Anthropic's count; no OpenAI field has it). */
  cache_creation_input_tokens?: number;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
  /** Legacy function calling: the one call, in place of `tool_calls`. */
  function_call?: FunctionCall;
  refusal?: string | null;
  /** The model's reasoning (thinking) text, where the upstream returns it: DeepSeek's and vLLM's field, which native adapters fill too. */
  reasoning_content?: string;
}

export interface ChatChoice {
  index: number;
  message: AssistantMessage;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Usage;
  system_fingerprint?: string | null;
  [key: string]: unknown;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  tool_calls?: ToolCallDelta[];
  function_call?: Partial<FunctionCall>;
  refusal?: string | null;
  /** A piece of the model's reasoning, before (or between) its answer's pieces. */
  reasoning_content?: string;
}

export interface ChunkChoice {
  index: number;
  delta: ChunkDelta;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
  [key: string]: unknown;
}

export interface EmbeddingsRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
  user?: string;
  [key: string]: unknown;
}

export interface Embedding {
  object: 'embedding';
  index: number;
  embedding: number[] | string;
}

export interface EmbeddingsResponse {
  object: 'list';
  data: Embedding[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface ModelList {
  object: 'list';
  data: { id: string; object: 'model'; created: number; owned_by: string }[];
}

export interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}
