/**
 * Ollama native API wire types (`POST /api/chat`, `POST /api/embed`): only the
 * parts the adapter writes or reads. Unlike OpenAI, tool-call arguments are a
 * JSON object, images are bare base64 strings beside the text, and sampling
 * settings live under `options`. Response fields are optional: versions differ
 * (tool-call `id`, `done_reason`, `thinking` arrived over time).
 */

export interface OllamaToolCall {
  id?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> };
}

export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Base64 without a data-URL prefix. */
  images?: string[];
  tool_calls?: OllamaToolCall[];
  /** Tool results name their tool; newer servers also take the call's id. */
  tool_name?: string;
  tool_call_id?: string;
}

export interface OllamaTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface OllamaOptions {
  temperature?: number;
  top_p?: number;
  num_predict?: number;
  stop?: string[];
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
}

export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  stream: boolean;
  tools?: OllamaTool[];
  /** `"json"` for JSON mode, or a JSON schema for structured output. */
  format?: 'json' | Record<string, unknown>;
  options?: OllamaOptions;
  /** Thinking models: on or off; gpt-oss: a level (think.ts). */
  think?: OllamaThink;
}

export type OllamaThink = boolean | 'low' | 'medium' | 'high';

/** A buffered answer, or one NDJSON line of a stream (the last has `done: true`). */
export interface OllamaChatResponse {
  model?: string;
  created_at?: string;
  message?: {
    role?: string;
    content?: string;
    thinking?: string;
    tool_calls?: { id?: string; function?: { index?: number; name?: string; arguments?: unknown } }[];
  };
  done?: boolean;
  done_reason?: string;
  total_duration?: number;
  load_duration?: number;
  prompt_eval_count?: number;
  prompt_eval_duration?: number;
  eval_count?: number;
  eval_duration?: number;
  /** Present instead of everything else when the server fails mid-stream. */
  error?: string;
}

export interface OllamaEmbedRequest {
  model: string;
  input: string | string[];
  dimensions?: number;
}

export interface OllamaEmbedResponse {
  model?: string;
  embeddings: number[][];
  total_duration?: number;
  load_duration?: number;
  prompt_eval_count?: number;
}

export interface OllamaErrorBody {
  error: string;
}
