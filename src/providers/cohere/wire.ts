/**
 * Cohere v2 wire types (`POST /v2/chat`, `POST /v2/embed`): only the parts the
 * adapter writes or reads. Response types keep every field optional because
 * Cohere adds content, event and finish-reason kinds over time and the adapter
 * must skip what it does not know.
 */

export interface CohereTextContent {
  type: 'text';
  text: string;
}

export interface CohereImageContent {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface CohereToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type CohereMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | (CohereTextContent | CohereImageContent)[] }
  | { role: 'assistant'; content?: string; tool_calls?: CohereToolCall[]; tool_plan?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export type CohereResponseFormat = { type: 'text' } | { type: 'json_object'; json_schema?: Record<string, unknown> };

export interface CohereChatRequest {
  model: string;
  messages: CohereMessage[];
  stream: boolean;
  tools?: CohereTool[];
  strict_tools?: boolean;
  tool_choice?: 'REQUIRED' | 'NONE';
  max_tokens?: number;
  temperature?: number;
  p?: number;
  stop_sequences?: string[];
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  response_format?: CohereResponseFormat;
  /** Reasoning models only (thinking.ts). */
  thinking?: CohereThinking;
}

export interface CohereThinking {
  type: 'enabled' | 'disabled';
  /** The most tokens the model may think for; it answers when it runs out. */
  token_budget?: number;
}

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

export type CohereResponseContent =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string }
  | { type: string; [key: string]: unknown };

export interface CohereChatResponse {
  id: string;
  finish_reason: string;
  message: {
    role: 'assistant';
    content?: CohereResponseContent[];
    tool_calls?: CohereToolCall[];
    tool_plan?: string;
    citations?: unknown[];
  };
  usage?: CohereUsage;
}

/** One `data:` payload of a `/v2/chat` stream; `type` names the event. */
export interface CohereStreamEvent {
  type?: string;
  id?: string;
  index?: number;
  delta?: {
    message?: {
      role?: string;
      content?: { type?: string; text?: string; thinking?: string };
      tool_plan?: string;
      /** A single call here, not an array. */
      tool_calls?: { id?: string; type?: string; function?: { name?: string; arguments?: string } };
    };
    finish_reason?: string;
    error?: string;
    usage?: CohereUsage;
  };
}

export interface CohereEmbedRequest {
  model: string;
  texts: string[];
  input_type: 'search_document' | 'search_query' | 'classification' | 'clustering';
  embedding_types: ['float'];
  output_dimension?: number;
}

export interface CohereEmbedResponse {
  id?: string;
  embeddings: { float?: number[][] };
  texts?: string[];
  meta?: {
    billed_units?: { input_tokens?: number };
    tokens?: { input_tokens?: number };
  };
  response_type?: string;
}

/** Cohere's error body: `{"id": "...", "message": "..."}`. */
export interface CohereErrorBody {
  id?: string;
  message: string;
}
