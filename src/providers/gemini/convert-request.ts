/**
 * OpenAI ChatRequest → Gemini GenerateContentRequest. Pure: no I/O, no clock.
 * Anything that cannot be expressed in Gemini's format (a token-less part
 * type, a tool result with no matching call) throws an `invalid_request`
 * UpstreamError rather than being dropped silently.
 */
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall } from '../../protocol/openai.js';
import { parseDataUrl } from '../../protocol/data-url.js';
import { invalidRequest } from './errors.js';
import { responseFormat, stopSequences, textAnswer, textOnlyParts, TEXT_AND_RESULT_ROLES, toolsBesideJson, type ToolSelection } from '../request-options.js';
import { schemaBudget, toGeminiParameters, toGeminiSchema, type SchemaBudget } from './to-gemini-schema.js';
import { parseClientJson } from '../client-json.js';
import { appendAll } from '../append-all.js';
import { reasoningEffortOf, roomForThinking, THINKING_BUDGET } from '../reasoning-effort.js';
import { thinkingConfigOf } from './thinking.js';
import type {
  GeminiContent,
  GeminiFunctionDeclaration,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiRole,
  GenerateContentRequest,
} from './wire.js';

/**
 * Gemini 3 rejects a function-call turn without the thought signature it
 * issued; history that came from another provider (a fallback) or a client
 * that dropped `extra_content` has none. Google documents this value as the
 * way to skip the check for such transferred history.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/** A tool call as Gemini's OpenAI-compatible API returns it: the signature rides in `extra_content`. */
export type ToolCallWithSignature = ToolCall & { extra_content?: { google?: { thought_signature?: string } } };

/** A Map, not an object: the extension is the client's, and `.constructor` found Object's own (sent as no mimeType). */
const MIME_BY_EXT: ReadonlyMap<string, string> = new Map([
  ['png', 'image/png'],
  ['jpg', 'image/jpeg'],
  ['jpeg', 'image/jpeg'],
  ['gif', 'image/gif'],
  ['webp', 'image/webp'],
  ['heic', 'image/heic'],
  ['heif', 'image/heif'],
  ['pdf', 'application/pdf'],
]);

/** `model`: the deployment's, which decides how `reasoning_effort` is said (thinking.ts). */
export function toGenerateContentRequest(req: ChatRequest, model = ''): GenerateContentRequest {
  const system: { text: string }[] = [];
  const contents: GeminiContent[] = [];
  const toolNames = new Map<string, string>();
  /**
   * Gemini pairs function responses with the calls by position, not by id: a run of
   * tool messages is put in the order of the calls they answer (a client may send the
   * results in the order they finished), then pushed as one turn.
   */
  const callOrder = new Map<string, number>();
  let responses: { order: number; part: GeminiPart }[] = [];
  const flushResponses = (): void => {
    if (responses.length === 0) return;
    const run = responses.sort((a, b) => a.order - b.order).map((r) => r.part);
    responses = [];
    push('user', run);
  };

  const push = (role: GeminiRole, parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    // Gemini wants turns to alternate; consecutive same-role messages (several
    // tool results, a user message after them) become one turn.
    if (last && last.role === role) appendAll(last.parts, parts);
    else contents.push({ role, parts });
  };

  textOnlyParts(req.messages, 'gemini', TEXT_AND_RESULT_ROLES);
  req.messages.forEach((msg, i) => {
    if (msg.role !== 'tool') flushResponses();
    switch (msg.role) {
      case 'system':
      case 'developer':
        for (const text of textsOf(msg.content)) if (text) system.push({ text });
        return;
      case 'user':
        push('user', userParts(msg.content, i));
        return;
      case 'assistant':
        push('model', assistantParts(msg, i, toolNames));
        callOrder.clear();
        (msg.tool_calls ?? []).forEach((c, k) => {
          if (typeof c?.id === 'string') callOrder.set(c.id, k);
        });
        return;
      case 'tool': {
        const id = msg.tool_call_id;
        const name = (id !== undefined ? toolNames.get(id) : undefined) ?? msg.name;
        if (name === undefined) {
          throw invalidRequest(`tool message has no preceding tool call with id "${id ?? ''}"`, `messages[${i}].tool_call_id`);
        }
        // A result for no call of the last assistant turn goes after those that answer one, in the order sent.
        const order = (id !== undefined ? callOrder.get(id) : undefined) ?? Number.MAX_SAFE_INTEGER;
        responses.push({ order, part: { functionResponse: { name, response: toolResponse(msg.content, `messages[${i}].content`) } } });
        return;
      }
      case 'function':
        if (typeof msg.name !== 'string') throw invalidRequest('function message needs a name', `messages[${i}].name`);
        push('user', [{ functionResponse: { name: msg.name, response: toolResponse(msg.content, `messages[${i}].content`) } }]);
        return;
      default:
        throw invalidRequest(`unsupported message role "${String(msg.role)}"`, `messages[${i}].role`);
    }
  });

  flushResponses();

  // Gemini requires at least one turn; a system-only request still deserves an answer.
  if (contents.length === 0 && system.length > 0) contents.push({ role: 'user', parts: system.splice(0) });
  if (contents.length === 0) throw invalidRequest('a request whose messages hold no text cannot be sent to Gemini', 'messages');

  const out: GenerateContentRequest = { contents };
  if (system.length > 0) out.systemInstruction = { parts: system };

  textAnswer(req, 'gemini');
  const selection = toolsBesideJson(req, 'gemini');
  /** One for the request's schemas together: see MAX_INLINED_NODES. */
  const budget = schemaBudget();
  if (selection) {
    out.tools = [{ functionDeclarations: functionDeclarations(selection.tools, budget) }];
    const toolConfig = functionCallingConfig(selection);
    if (toolConfig) out.toolConfig = { functionCallingConfig: toolConfig };
  }

  const generationConfig = toGenerationConfig(req, budget);
  const effort = reasoningEffortOf(req);
  const thinking = effort === undefined ? undefined : thinkingConfigOf(effort, model);
  if (thinking) {
    out.generationConfig = { ...generationConfig, thinkingConfig: thinking };
    // Thoughts count in maxOutputTokens: a small client limit is the answer's, the thinking goes on top.
    const max = generationConfig?.maxOutputTokens;
    if (max !== undefined && effort !== 'none' && effort !== undefined) out.generationConfig.maxOutputTokens = roomForThinking(max, THINKING_BUDGET[effort]);
  } else if (generationConfig) out.generationConfig = generationConfig;
  return out;
}

function textsOf(content: ChatMessage['content']): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const p of content) if (p.type === 'text' && typeof p.text === 'string') out.push(p.text);
  return out;
}

function userParts(content: ChatMessage['content'], i: number): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const parts: GeminiPart[] = [];
  content.forEach((p, j) => {
    const part = contentPart(p, `messages[${i}].content[${j}]`);
    if (part) parts.push(part);
  });
  return parts;
}

function contentPart(p: ContentPart, param: string): GeminiPart | undefined {
  switch (p.type) {
    case 'text':
      return typeof p.text === 'string' && p.text ? { text: p.text } : undefined;
    case 'image_url': {
      const url = (p.image_url as { url?: unknown } | undefined)?.url;
      if (typeof url !== 'string') throw invalidRequest('image_url needs a url', param);
      return mediaPart(url, 'image/jpeg', param);
    }
    case 'input_audio': {
      const audio = p.input_audio as { data?: unknown; format?: unknown } | undefined;
      if (typeof audio?.data !== 'string') throw invalidRequest('input_audio needs data', param);
      const format = typeof audio.format === 'string' ? audio.format : 'wav';
      return { inlineData: { mimeType: `audio/${format}`, data: audio.data } };
    }
    case 'file': {
      const data = (p.file as { file_data?: unknown } | undefined)?.file_data;
      if (typeof data !== 'string' || !data.startsWith('data:')) {
        throw invalidRequest('file parts need inline file_data (file ids are not portable to Gemini)', param);
      }
      return mediaPart(data, 'application/pdf', param);
    }
    default:
      throw invalidRequest(`content part type "${p.type}" is not supported by Gemini`, param);
  }
}

/** A data URL → inlineData; an http(s) URL → fileData (mime guessed from the extension). */
function mediaPart(url: string, defaultMime: string, param: string): GeminiPart {
  if (/^data:/i.test(url)) {
    const d = parseDataUrl(url);
    if (d === undefined) throw invalidRequest('malformed data URL', param);
    return { inlineData: { mimeType: d.mediaType || defaultMime, data: d.base64 } };
  }
  if (/^https?:\/\//i.test(url)) return { fileData: { fileUri: url, mimeType: guessMime(url, defaultMime) } };
  throw invalidRequest('media URLs must be data: or http(s) URLs', param);
}

export function guessMime(url: string, fallback: string): string {
  const path = url.split(/[?#]/, 1)[0]!;
  const dot = path.lastIndexOf('.');
  if (dot === -1 || dot < path.lastIndexOf('/')) return fallback;
  return MIME_BY_EXT.get(path.slice(dot + 1).toLowerCase()) ?? fallback;
}

function assistantParts(msg: ChatMessage, i: number, toolNames: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = [];
  for (const text of textsOf(msg.content)) if (text) parts.push({ text });
  const calls = Array.isArray(msg.tool_calls) ? (msg.tool_calls as ToolCallWithSignature[]) : [];
  calls.forEach((call, k) => {
    const name = call.function?.name;
    if (typeof name !== 'string') return;
    if (typeof call.id === 'string') toolNames.set(call.id, name);
    const part: GeminiPart = { functionCall: { name, args: parseArgs(call.function.arguments, `messages[${i}].tool_calls[${k}].function.arguments`) } };
    const signature = call.extra_content?.google?.thought_signature;
    // Only the first call of a parallel batch carries Gemini's signature.
    if (typeof signature === 'string' && signature) part.thoughtSignature = signature;
    else if (k === 0) part.thoughtSignature = SKIP_THOUGHT_SIGNATURE;
    parts.push(part);
  });
  const legacy = msg.function_call as { name?: unknown; arguments?: unknown } | undefined;
  if (legacy && typeof legacy.name === 'string') {
    parts.push({ functionCall: { name: legacy.name, args: parseArgs(legacy.arguments, `messages[${i}].function_call.arguments`) }, thoughtSignature: SKIP_THOUGHT_SIGNATURE });
  }
  return parts;
}

/**
 * Gemini wants `args` as an object; unparseable history becomes `{}` rather than failing the
 * turn. Arguments nested past a request body's bound are refused (client-json.ts).
 */
function parseArgs(text: unknown, param: string): Record<string, unknown> {
  if (typeof text !== 'string' || text.trim() === '') return {};
  let v: unknown;
  try {
    v = parseClientJson(text, param);
  } catch (err) {
    if (err instanceof SyntaxError) return {};
    throw err;
  }
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}

/** `response` must be a JSON object: a parsed object as is, anything else wrapped in `{content}`. As parseArgs, too deep is refused. */
function toolResponse(content: ChatMessage['content'], param: string): Record<string, unknown> {
  const text = textsOf(content).join('');
  let v: unknown;
  try {
    v = parseClientJson(text, param);
  } catch (err) {
    if (err instanceof SyntaxError) return { content: text };
    throw err;
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  return { content: v };
}

function functionDeclarations(tools: FunctionTool[], budget: SchemaBudget): GeminiFunctionDeclaration[] {
  const out: GeminiFunctionDeclaration[] = [];
  tools.forEach((tool, i) => {
    if (tool.type !== 'function' || typeof tool.function?.name !== 'string') {
      throw invalidRequest(`tool type "${String(tool.type)}" is not supported by Gemini`, `tools[${i}]`);
    }
    const decl: GeminiFunctionDeclaration = { name: tool.function.name };
    if (tool.function.description) decl.description = tool.function.description;
    // OpenAI reads properties without a type as an object; Gemini requires the type.
    const given = tool.function.parameters;
    const parameters = toGeminiParameters(given && given.type === undefined && given.properties ? { type: 'object', ...given } : given, `tools[${i}].function.parameters`, budget);
    if (parameters) decl.parameters = parameters;
    out.push(decl);
  });
  return out;
}

function functionCallingConfig(sel: ToolSelection) {
  if (!sel.explicit) return undefined;
  if (sel.mode === 'none') return { mode: 'NONE' as const };
  if (sel.mode === 'auto') return { mode: 'AUTO' as const };
  return sel.named !== undefined ? { mode: 'ANY' as const, allowedFunctionNames: [sel.named] } : { mode: 'ANY' as const };
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function toGenerationConfig(req: ChatRequest, budget: SchemaBudget): GeminiGenerationConfig | undefined {
  const g: GeminiGenerationConfig = {};
  const temperature = num(req.temperature);
  if (temperature !== undefined) g.temperature = temperature;
  const topP = num(req.top_p);
  if (topP !== undefined) g.topP = topP;
  const maxTokens = num(req.max_completion_tokens) ?? num(req.max_tokens);
  if (maxTokens !== undefined) g.maxOutputTokens = maxTokens;
  const stop = stopSequences(req, 'gemini', 5);
  if (stop) g.stopSequences = stop;
  const n = num(req.n);
  if (n !== undefined) g.candidateCount = n;
  const seed = num(req.seed);
  if (seed !== undefined) g.seed = seed;
  const presence = num(req.presence_penalty);
  if (presence !== undefined) g.presencePenalty = presence;
  const frequency = num(req.frequency_penalty);
  if (frequency !== undefined) g.frequencyPenalty = frequency;

  const format = responseFormat(req, 'gemini');
  if (format !== undefined) {
    g.responseMimeType = 'application/json';
    const schema = format.type === 'json_schema' ? toGeminiSchema(format.json_schema?.schema, 'response_format.json_schema.schema', budget) : undefined;
    if (schema) g.responseSchema = schema;
  }
  return Object.keys(g).length > 0 ? g : undefined;
}
