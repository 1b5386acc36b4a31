/**
 * Gemini Developer API (generativelanguage v1beta) wire types: only the parts
 * the adapter writes or reads. Response fields are all optional because the
 * parsers must tolerate anything missing (a blocked prompt has no candidates, a
 * blocked candidate has no content, a stream fragment may carry only usage).
 */

export interface GeminiFunctionCall {
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiFunctionResponse {
  id?: string;
  name: string;
  response: Record<string, unknown>;
}

export interface GeminiPart {
  text?: string;
  /** Set on reasoning summaries when thoughts are included; never shown as content. */
  thought?: boolean;
  /** Opaque reasoning state that Gemini 3 requires back on function-call turns. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

export type GeminiRole = 'user' | 'model';

export interface GeminiContent {
  role?: GeminiRole;
  parts: GeminiPart[];
}

/** The OpenAPI 3.0 subset Gemini accepts for function parameters and response schemas. */
export type GeminiSchema = Record<string, unknown>;

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

export type FunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: GeminiSchema;
  thinkingConfig?: GeminiThinkingConfig;
}

/** One of level (Gemini 3) and budget (2.5) per request: Gemini refuses both. */
export interface GeminiThinkingConfig {
  /** The enum's names, as Google's own SDK sends them. */
  thinkingLevel?: 'MINIMAL' | 'LOW' | 'MEDIUM' | 'HIGH';
  /** Tokens; 0 stops thinking where the model allows it, -1 lets the model decide. */
  thinkingBudget?: number;
  /** Return thought summaries, as parts with `thought: true`. */
  includeThoughts?: boolean;
}

export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: GeminiFunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig: { mode: FunctionCallingMode; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  finishMessage?: string;
  index?: number;
  safetyRatings?: unknown[];
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GenerateContentResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; safetyRatings?: unknown[] };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

export interface EmbedContentRequest {
  model: string;
  content: { parts: { text: string }[] };
  outputDimensionality?: number;
  taskType?: GeminiTaskType;
}

export type GeminiTaskType = 'RETRIEVAL_DOCUMENT' | 'RETRIEVAL_QUERY' | 'CLASSIFICATION' | 'CLUSTERING';

export interface BatchEmbedContentsRequest {
  requests: EmbedContentRequest[];
}

export interface BatchEmbedContentsResponse {
  embeddings?: { values?: number[] }[];
  usageMetadata?: { promptTokenCount?: number; totalTokenCount?: number };
}

/** `{"error": {...}}`: the body of every Gemini failure, buffered or mid-stream. */
export interface GeminiErrorBody {
  error: {
    code?: number;
    message?: string;
    status?: string;
    details?: { '@type'?: string; retryDelay?: string; reason?: string; [key: string]: unknown }[];
  };
}
