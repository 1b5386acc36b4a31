/**
 * A loopback stand-in for the Gemini Developer API (generativelanguage v1beta):
 * `:generateContent`, `:streamGenerateContent` (`alt=sse`, or a JSON array
 * without it), `:embedContent` and `:batchEmbedContents`, in Google's exact
 * wire format. It validates requests the way the real service does where an
 * adapter could get it wrong (unknown fields, JSON Schema keys Gemini lacks,
 * roles, empty parts, function responses not matching the calls, the API
 * key), answering with Google's own error bodies. Replies are scripted with
 * `enqueue`, one per request, in order; with none queued it answers a default
 * text. `gemini-server.test.ts` drives it with the official @google/genai SDK.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { sendText, startScriptedServer, type Exchange, type ScriptedServer } from './scripted-server.js';
import { includesThoughts, thinkingProblem } from './gemini-thinking.js';

export interface GeminiRecordedRequest {
  method: string;
  /** Path and query exactly as received. */
  url: string;
  /** Decoded model name from the path (`gemini-2.5-flash`). */
  model: string;
  action: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface ScriptedCall {
  name: string;
  args?: Record<string, unknown>;
  thoughtSignature?: string;
}

export interface ScriptedUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  totalTokenCount?: number;
}

/**
 * `thoughts`: thought summaries, sent first (one event each when streamed) as parts with
 * `thought: true` — only to a request whose thinkingConfig sets includeThoughts, as Gemini does.
 */
export type GeminiReply =
  /** Text; a list is streamed as one event per item (and joined when buffered). */
  | { kind: 'text'; text: string | string[]; finishReason?: string; usage?: ScriptedUsage; modelVersion?: string; thoughts?: string | string[] }
  /** Function calls, optionally after some text. Gemini says STOP for these. */
  | { kind: 'function_call'; calls: ScriptedCall[]; text?: string | string[]; usage?: ScriptedUsage; modelVersion?: string; thoughts?: string | string[] }
  /**
   * Candidates that end with `finishReason` and no `content` at all, as Gemini ends one whose
   * function call it could not parse (MALFORMED_FUNCTION_CALL); usage counts the prompt only.
   * Streamed: that one event.
   */
  | { kind: 'no_content'; finishReason: string }
  /** A non-2xx answer; `body` defaults to Google's error body for the status. */
  | { kind: 'error'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Streams the text events without a finishReason, then destroys the socket; buffered: destroys it at once. */
  | { kind: 'cut'; text: string[] }
  /** Exact bodies: `response` answers a buffered call, `events` a stream (`end: 'cut'` destroys the socket after them). */
  | { kind: 'raw'; response?: unknown; events?: unknown[]; end?: 'close' | 'cut' }
  /** Embeddings: the scripted `vectors` first; a faulty service's answer short of its last `omit`. */
  | { kind: 'embeddings'; vectors?: number[][]; omit?: number };

export interface GeminiServerOptions {
  /** When set, requests must carry it (`x-goog-api-key` or `?key=`), as the real API demands. */
  apiKey?: string;
  /** Reject function-call turns without a thoughtSignature, as Gemini 3 models do. */
  requireThoughtSignatures?: boolean;
}

/** `url` is the origin, e.g. `http://127.0.0.1:41234`: what the SDK takes as `baseUrl`. */
export type GeminiServer = ScriptedServer<GeminiRecordedRequest, GeminiReply>;

const JSON_TYPE = 'application/json; charset=UTF-8';
const ROUTE = /^\/(v1beta|v1)\/(models|tunedModels)\/([^/:]+):([A-Za-z]+)$/;

const RPC_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export function googleError(code: number, message: string, details?: unknown[]): { error: Record<string, unknown> } {
  const error: Record<string, unknown> = { code, message, status: RPC_STATUS[code] ?? 'UNKNOWN' };
  if (details) error.details = details;
  return { error };
}

class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
    readonly details?: unknown[],
  ) {
    super(message);
  }
}

const REQUEST_FIELDS = new Set([
  'contents', 'systemInstruction', 'system_instruction', 'tools', 'toolConfig', 'tool_config',
  'safetySettings', 'safety_settings', 'generationConfig', 'generation_config', 'cachedContent', 'cached_content',
]);
const GENERATION_FIELDS = new Set([
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities', 'candidateCount',
  'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs',
  'logprobs', 'enableEnhancedCivicAnswers', 'speechConfig', 'thinkingConfig', 'mediaResolution', 'imageConfig',
]);
const PART_FIELDS = new Set([
  'text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult',
  'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata',
]);
const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const DECLARATION_FIELDS = new Set(['name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior']);
const SCHEMA_FIELDS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum',
]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function unknownField(name: string, at?: string): BadRequest {
  return new BadRequest(`Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`);
}

function checkSchema(s: unknown, at: string): void {
  if (!isObj(s)) throw new BadRequest(`Invalid value at '${at}': expected a Schema object.`);
  for (const k of Object.keys(s)) if (!SCHEMA_FIELDS.has(k)) throw unknownField(k, at);
  const type = typeof s.type === 'string' ? s.type.toLowerCase() : undefined;
  if (s.properties !== undefined) {
    if (!isObj(s.properties)) throw new BadRequest(`Invalid value at '${at}.properties'.`);
    if (type === 'object' && Object.keys(s.properties).length === 0) {
      throw new BadRequest(`* GenerateContentRequest.${at}.properties: should be non-empty for OBJECT type`);
    }
    for (const [name, sub] of Object.entries(s.properties)) checkSchema(sub, `${at}.properties[${name}].value`);
  }
  if (s.items !== undefined) checkSchema(s.items, `${at}.items`);
  if (Array.isArray(s.anyOf)) s.anyOf.forEach((sub, i) => checkSchema(sub, `${at}.any_of[${i}]`));
  if (s.enum !== undefined && (!Array.isArray(s.enum) || !s.enum.every((e) => typeof e === 'string'))) {
    throw new BadRequest(`Invalid value at '${at}.enum': enum values must be strings.`);
  }
}

function validateGenerate(body: Obj, model: string, opts: GeminiServerOptions): void {
  for (const k of Object.keys(body)) if (!REQUEST_FIELDS.has(k)) throw unknownField(k);
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) throw new BadRequest('* GenerateContentRequest.contents: contents is not specified');
  contents.forEach((c, i) => {
    if (!isObj(c)) throw new BadRequest(`Invalid value at 'contents[${i}]'.`);
    if (c.role !== undefined && c.role !== 'user' && c.role !== 'model') throw new BadRequest('Please use a valid role: user, model.');
    if (!Array.isArray(c.parts) || c.parts.length === 0) {
      throw new BadRequest(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
    }
    c.parts.forEach((p, j) => {
      if (!isObj(p)) throw new BadRequest(`Invalid value at 'contents[${i}].parts[${j}]'.`);
      for (const k of Object.keys(p)) if (!PART_FIELDS.has(k)) throw unknownField(k, `contents[${i}].parts[${j}]`);
      const data = DATA_FIELDS.filter((k) => p[k] !== undefined);
      if (data.length !== 1) throw new BadRequest(`* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field`);
      if (p.functionResponse !== undefined && !(isObj(p.functionResponse) && isObj(p.functionResponse.response) && typeof p.functionResponse.name === 'string')) {
        throw new BadRequest(`Invalid value at 'contents[${i}].parts[${j}].function_response'.`);
      }
      if (p.functionCall !== undefined && !(isObj(p.functionCall) && typeof p.functionCall.name === 'string' && (p.functionCall.args === undefined || isObj(p.functionCall.args)))) {
        throw new BadRequest(`Invalid value at 'contents[${i}].parts[${j}].function_call'.`);
      }
    });
    const calls = c.parts.filter((p) => isObj(p) && p.functionCall !== undefined) as Obj[];
    if (calls.length > 0) {
      if (opts.requireThoughtSignatures && typeof calls[0]!.thoughtSignature !== 'string') {
        throw new BadRequest(`Function call is missing a thought_signature in functionCall parts. Position: contents[${i}].parts[0]`);
      }
      const next = contents[i + 1] as Obj | undefined;
      const responses = next && Array.isArray(next.parts) ? next.parts.filter((p) => isObj(p) && p.functionResponse !== undefined).length : calls.length;
      if (next && responses !== calls.length) {
        throw new BadRequest('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
      }
    }
  });
  const tools = body.tools;
  if (tools !== undefined) {
    if (!Array.isArray(tools)) throw new BadRequest("Invalid value at 'tools'.");
    tools.forEach((t, i) => {
      const decls = isObj(t) ? t.functionDeclarations : undefined;
      if (!Array.isArray(decls)) return;
      decls.forEach((d, j) => {
        const at = `tools[${i}].function_declarations[${j}]`;
        if (!isObj(d) || typeof d.name !== 'string') throw new BadRequest(`* GenerateContentRequest.${at}.name: Name cannot be empty.`);
        for (const k of Object.keys(d)) if (!DECLARATION_FIELDS.has(k)) throw unknownField(k, at);
        if (d.parameters !== undefined) checkSchema(d.parameters, `${at}.parameters`);
      });
    });
  }
  const gen = body.generationConfig;
  if (gen !== undefined) {
    if (!isObj(gen)) throw new BadRequest("Invalid value at 'generation_config'.");
    for (const k of Object.keys(gen)) if (!GENERATION_FIELDS.has(k)) throw unknownField(k, 'generation_config');
    if (gen.responseSchema !== undefined) checkSchema(gen.responseSchema, 'generation_config.response_schema');
    const thinking = thinkingProblem(gen, model);
    if (thinking) throw new BadRequest(thinking);
  }
}

function textOfRequest(body: Obj): string {
  let text = '';
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isObj(v)) {
      if (typeof v.text === 'string') text += v.text;
      for (const [k, sub] of Object.entries(v)) if (k !== 'text') walk(sub);
    }
  };
  walk(body.contents);
  walk(body.systemInstruction);
  return text;
}

const tokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

function fullUsage(prompt: number, output: string, scripted?: ScriptedUsage): Obj {
  const promptTokenCount = scripted?.promptTokenCount ?? prompt;
  const candidatesTokenCount = scripted?.candidatesTokenCount ?? tokens(output);
  const usage: Obj = {
    promptTokenCount,
    candidatesTokenCount,
    totalTokenCount:
      scripted?.totalTokenCount ?? promptTokenCount + candidatesTokenCount + (scripted?.thoughtsTokenCount ?? 0),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokenCount }],
  };
  if (scripted?.thoughtsTokenCount !== undefined) usage.thoughtsTokenCount = scripted.thoughtsTokenCount;
  if (scripted?.cachedContentTokenCount !== undefined) usage.cachedContentTokenCount = scripted.cachedContentTokenCount;
  return usage;
}

/** Usage before any output: the prompt's tokens alone, as Gemini reports them mid-stream and for a candidate without content. */
function promptUsage(prompt: number): Obj {
  return { promptTokenCount: prompt, totalTokenCount: prompt, promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }] };
}

function vectorFor(text: string, dims: number): number[] {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  const out: number[] = [];
  for (let i = 0; i < dims; i++) {
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
    out.push(Number(((h % 2000) / 1000 - 1).toFixed(6)));
  }
  return out;
}

/** Google's TaskType values for embeddings. */
const TASK_TYPES = new Set(['TASK_TYPE_UNSPECIFIED', 'RETRIEVAL_QUERY', 'RETRIEVAL_DOCUMENT', 'SEMANTIC_SIMILARITY', 'CLASSIFICATION', 'CLUSTERING', 'QUESTION_ANSWERING', 'FACT_VERIFICATION', 'CODE_RETRIEVAL_QUERY']);

export async function startGeminiServer(opts: GeminiServerOptions = {}): Promise<GeminiServer> {
  let responseNo = 0;

  // Google pretty-prints its JSON.
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void =>
    sendText(res, status, JSON_TYPE, JSON.stringify(body, null, 2), headers);

  const handle = async (req: IncomingMessage, res: ServerResponse, ex: Exchange<GeminiRecordedRequest, GeminiReply>): Promise<void> => {
    const raw = ex.body;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = ROUTE.exec(url.pathname);
    const query = Object.fromEntries(url.searchParams);
    let body: Obj = {};
    let parsed = true;
    try {
      const v: unknown = raw ? JSON.parse(raw) : {};
      if (isObj(v)) body = v;
      else parsed = false;
    } catch {
      parsed = false;
    }
    const model = route ? decodeURIComponent(route[3]!) : '';
    const action = route ? route[4]! : '';
    ex.record({ method: req.method ?? '', url: req.url ?? '', model, action, query, headers: req.headers, body });

    if (opts.apiKey !== undefined) {
      const key = (req.headers['x-goog-api-key'] as string | undefined) ?? query.key;
      if (key === undefined) {
        return send(res, 403, googleError(403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."));
      }
      if (key !== opts.apiKey) {
        return send(res, 400, googleError(400, 'API key not valid. Please pass a valid API key.', [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
        ]));
      }
    }
    if (req.method !== 'POST' || !route) return send(res, 404, googleError(404, `Method not found: ${url.pathname}`));
    if (!parsed) return send(res, 400, googleError(400, 'Invalid JSON payload received. Expected an object.'));

    const reply = ex.next();
    if (reply?.kind === 'error') {
      return send(res, reply.status, reply.body ?? googleError(reply.status, `scripted ${reply.status}`), reply.headers);
    }
    if (reply?.kind === 'cut' && action !== 'streamGenerateContent') {
      req.socket.destroy();
      return;
    }

    try {
      switch (action) {
        case 'generateContent':
          validateGenerate(body, model, opts);
          return generate(res, body, model, reply);
        case 'streamGenerateContent':
          validateGenerate(body, model, opts);
          return stream(res, body, model, reply, query.alt === 'sse');
        case 'embedContent':
        case 'batchEmbedContents':
          return embed(res, body, model, action, reply);
        default:
          return send(res, 404, googleError(404, `Method not found: ${action}`));
      }
    } catch (err) {
      if (err instanceof BadRequest) return send(res, err.status, googleError(err.status, err.message, err.details));
      throw err;
    }
  };

  /** The candidates and usage one scripted reply stands for. */
  const script = (body: Obj, model: string, reply: GeminiReply | undefined) => {
    const r = reply ?? { kind: 'text' as const, text: 'Hello from Gemini.' };
    const prompt = tokens(textOfRequest(body));
    const n = isObj(body.generationConfig) && typeof body.generationConfig.candidateCount === 'number' ? body.generationConfig.candidateCount : 1;
    const texts = r.kind === 'text' || r.kind === 'cut' ? [r.text].flat() : r.kind === 'function_call' && r.text !== undefined ? [r.text].flat() : [];
    const calls = r.kind === 'function_call' ? r.calls : [];
    const finishReason = r.kind === 'text' ? (r.finishReason ?? 'STOP') : r.kind === 'no_content' ? r.finishReason : 'STOP';
    const scripted = r.kind === 'text' || r.kind === 'function_call' ? r.usage : undefined;
    const modelVersion = (r.kind === 'text' || r.kind === 'function_call' ? r.modelVersion : undefined) ?? model;
    const output = texts.join('') + calls.map((c) => c.name + JSON.stringify(c.args ?? {})).join('');
    const callParts = calls.map((c) => {
      const part: Obj = { functionCall: { name: c.name, args: c.args ?? {} } };
      if (c.thoughtSignature) part.thoughtSignature = c.thoughtSignature;
      return part;
    });
    const usage = r.kind === 'no_content' ? promptUsage(prompt) : fullUsage(prompt, output, scripted);
    const thoughts = (r.kind === 'text' || r.kind === 'function_call') && r.thoughts !== undefined && includesThoughts(body) ? [r.thoughts].flat() : [];
    return { r, n, texts, thoughts, callParts, finishReason, prompt, usage, modelVersion, responseId: `resp-${++responseNo}` };
  };

  const generate = (res: ServerResponse, body: Obj, model: string, reply: GeminiReply | undefined): void => {
    if (reply?.kind === 'raw') return send(res, 200, reply.response ?? reply.events?.[reply.events.length - 1] ?? {});
    const s = script(body, model, reply);
    const text = s.texts.join('');
    const thought = s.thoughts.join('');
    const parts = [...(thought ? [{ text: thought, thought: true }] : []), ...(text ? [{ text }] : []), ...s.callParts];
    const candidates = Array.from({ length: s.n }, (_, index) => ({
      ...(s.r.kind === 'no_content' ? {} : { content: { parts, role: 'model' } }),
      finishReason: s.finishReason,
      index,
    }));
    send(res, 200, { candidates, usageMetadata: s.usage, modelVersion: s.modelVersion, responseId: s.responseId });
  };

  const stream = (res: ServerResponse, body: Obj, model: string, reply: GeminiReply | undefined, sse: boolean): void => {
    let events: unknown[];
    let cut = false;
    if (reply?.kind === 'raw') {
      events = reply.events ?? (reply.response !== undefined ? [reply.response] : []);
      cut = reply.end === 'cut';
    } else {
      const s = script(body, model, reply);
      cut = s.r.kind === 'cut';
      const partial = promptUsage(s.prompt);
      const frame = (parts: unknown[], last: boolean): unknown => ({
        candidates: Array.from({ length: s.n }, (_, index) => ({
          content: { parts, role: 'model' },
          ...(last && !cut ? { finishReason: s.finishReason } : {}),
          index,
        })),
        usageMetadata: last && !cut ? s.usage : partial,
        modelVersion: s.modelVersion,
        responseId: s.responseId,
      });
      events = [];
      if (s.r.kind === 'no_content') {
        const candidates = Array.from({ length: s.n }, (_, index) => ({ finishReason: s.finishReason, index }));
        events.push({ candidates, usageMetadata: s.usage, modelVersion: s.modelVersion, responseId: s.responseId });
      }
      for (const t of s.thoughts) events.push(frame([{ text: t, thought: true }], false));
      const texts = s.r.kind === 'no_content' ? [] : s.texts.length > 0 || s.callParts.length > 0 ? s.texts : [''];
      texts.forEach((t, i) => {
        const last = i === texts.length - 1 && s.callParts.length === 0;
        events.push(frame([{ text: t }], last));
      });
      if (s.callParts.length > 0) events.push(frame(s.callParts, true));
    }
    if (!sse) {
      // Without alt=sse Google streams one JSON array of the same responses.
      return send(res, 200, events);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    for (const ev of events) res.write(`data: ${JSON.stringify(ev)}\r\n\r\n`);
    if (!cut) return void res.end();
    // Cut only once what was written has left, so the client sees the events and then the break.
    res.write('', () => res.socket?.destroy());
  };

  const embed = (res: ServerResponse, body: Obj, model: string, action: string, reply: GeminiReply | undefined): void => {
    const want = `models/${model}`;
    const items: Obj[] = action === 'embedContent' ? [body] : Array.isArray(body.requests) ? (body.requests as Obj[]) : [];
    if (action === 'batchEmbedContents') {
      for (const k of Object.keys(body)) if (k !== 'requests') throw unknownField(k);
      if (items.length === 0) throw new BadRequest('* BatchEmbedContentsRequest.requests: requests must not be empty');
      // The real service's cap on one batch.
      if (items.length > 100) throw new BadRequest('* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch');
    }
    const vectors = items.map((item, i) => {
      if (action === 'batchEmbedContents' && item.model !== want) {
        throw new BadRequest(`* BatchEmbedContentsRequest.requests[${i}].model: unexpected model name format`);
      }
      const content = item.content;
      const parts = isObj(content) && Array.isArray(content.parts) ? content.parts : [];
      if (parts.length === 0) throw new BadRequest(`* EmbedContentRequest.content: contents.parts must not be empty.`);
      const text = parts.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
      if (item.taskType !== undefined && !TASK_TYPES.has(item.taskType as string)) {
        throw new BadRequest(`Invalid value at 'requests[${i}].task_type' (type.googleapis.com/google.ai.generativelanguage.v1beta.TaskType), ${JSON.stringify(item.taskType)}`);
      }
      const dims = typeof item.outputDimensionality === 'number' ? item.outputDimensionality : 8;
      return (reply?.kind === 'embeddings' ? reply.vectors?.[i] : undefined) ?? vectorFor(text, dims);
    });
    if (action === 'embedContent') return send(res, 200, { embedding: { values: vectors[0] } });
    const omit = reply?.kind === 'embeddings' ? (reply.omit ?? 0) : 0;
    send(res, 200, { embeddings: vectors.slice(0, vectors.length - omit).map((values) => ({ values })) });
  };

  return startScriptedServer(handle, (res, err) => {
    if (err instanceof BadRequest) return send(res, err.status, googleError(err.status, err.message));
    if (!res.headersSent) send(res, 500, googleError(500, 'An internal error has occurred.'));
    else res.destroy();
  });
}
