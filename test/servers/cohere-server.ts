/**
 * A loopback Cohere v2 server speaking the exact wire format of `/v2/chat`
 * (buffered JSON and `event:`/`data:` SSE ending in `data: [DONE]`) and
 * `/v2/embed`. Scriptable per request: a message (text, tool plan, tool calls,
 * finish reason, usage, a stream cut after N events), an error status + body,
 * or raw bytes. Requests are recorded. The official `cohere-ai` SDK is the
 * judge of its faithfulness (cohere-server.test.ts).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { halves, sendJson as json, sendRaw, sseEvent, startScriptedServer, words, writeFrames, type ScriptedServer } from './scripted-server.js';

export interface CohereServerUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

export type CohereReply =
  | {
      kind: 'message';
      id?: string;
      text?: string;
      /** A reasoning model's thinking, before the text: sent unless the request disabled thinking. */
      thinking?: string;
      toolPlan?: string;
      toolCalls?: { id: string; name: string; arguments: string }[];
      /** Default: TOOL_CALL with tool calls, else COMPLETE. */
      finishReason?: string;
      /** Streams only: `message-end`'s `delta.error`, as Cohere says why a generation failed (finish_reason ERROR). */
      error?: string;
      usage?: CohereServerUsage;
      /** Streams only: destroy the socket after this many SSE events. */
      cutAfter?: number;
    }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; contentType?: string; body: string }
  | { kind: 'embed'; vectors: number[][]; billedInputTokens?: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type CohereServer = ScriptedServer<RecordedRequest, CohereReply>;

export interface CohereServerOptions {
  /** When set, requests without `Authorization: Bearer <apiKey>` get Cohere's 401. */
  apiKey?: string;
}

const DEFAULT_TEXT = 'Hello from Cohere.';

const EMBED_INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering']);

export async function startCohereServer(opts: CohereServerOptions = {}): Promise<CohereServer> {
  let seq = 0;

  return startScriptedServer<RecordedRequest, CohereReply>((req, res, ex) => {
    let body: unknown = ex.body;
    try {
      body = ex.body ? JSON.parse(ex.body) : undefined;
    } catch {
      // recorded as text; answered below
    }
    const path = req.url ?? '/';
    ex.record({ method: req.method ?? 'GET', path, headers: req.headers, body });
    const id = `c0ffee00-0000-4000-8000-${String(++seq).padStart(12, '0')}`;

    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return json(res, 401, { id, message: 'invalid api token' });
    }
    if (req.method !== 'POST' || (path !== '/v2/chat' && path !== '/v2/embed')) {
      return json(res, 404, { id, message: `no route for ${req.method} ${path}` });
    }
    if (typeof body !== 'object' || body === null) return json(res, 400, { id, message: 'invalid request: body must be JSON' });
    const b = body as Record<string, unknown>;
    if (typeof b.model !== 'string') return json(res, 400, { id, message: 'invalid request: model must be specified' });

    const reply = ex.next();
    if (reply?.kind === 'error') return json(res, reply.status, reply.body, reply.headers);
    if (reply?.kind === 'raw') return sendRaw(res, reply.status ?? 200, reply.contentType ?? 'text/event-stream', reply.body);
    if (path === '/v2/embed') {
      const texts = Array.isArray(b.texts) ? (b.texts as string[]) : [];
      // The real service's cap on one call.
      if (texts.length > 96) return json(res, 400, { id, message: `invalid request: total number of texts must be at most 96 - received ${texts.length}` });
      // v3 and later embed models require the input type, one of four.
      if (!EMBED_INPUT_TYPES.has(b.input_type as string)) {
        return json(res, 400, { id, message: `invalid request: input_type must be one of ${[...EMBED_INPUT_TYPES].join(', ')}` });
      }
      const vectors = reply?.kind === 'embed' ? reply.vectors : texts.map(defaultVector);
      const billed = reply?.kind === 'embed' && reply.billedInputTokens !== undefined ? reply.billedInputTokens : texts.length * 3;
      return json(res, 200, {
        id,
        texts,
        embeddings: { float: vectors },
        meta: { api_version: { version: '2' }, billed_units: { input_tokens: billed } },
        response_type: 'embeddings_by_type',
      });
    }
    const thinkingRefused = thinkingProblem(b);
    if (thinkingRefused) return json(res, 400, { id, message: thinkingRefused });
    const scripted = reply?.kind === 'message' ? reply : { kind: 'message' as const, text: DEFAULT_TEXT };
    // Reasoning models think unless told not to.
    const disabled = (b.thinking as { type?: unknown } | undefined)?.type === 'disabled';
    const message = disabled ? { ...scripted, thinking: undefined } : scripted;
    const messageId = message.id ?? id;
    if (b.stream === true) streamChat(res, messageId, message);
    else json(res, 200, bufferedChat(messageId, message));
  });
}

type MessageReply = Extract<CohereReply, { kind: 'message' }>;

/** What Cohere refuses in `thinking`: a shape it does not have, or thinking asked of a model that does not reason. */
function thinkingProblem(b: Record<string, unknown>): string | undefined {
  const t = b.thinking as Record<string, unknown> | undefined;
  if (t === undefined) return undefined;
  if (t === null || typeof t !== 'object' || (t.type !== 'enabled' && t.type !== 'disabled')) return "invalid request: thinking.type must be one of 'enabled', 'disabled'";
  const budget = t.token_budget;
  if (budget !== undefined && !(typeof budget === 'number' && Number.isInteger(budget) && budget > 0)) return 'invalid request: thinking.token_budget must be a positive integer';
  if (!String(b.model).includes('reasoning')) return `invalid request: thinking is not supported by model '${String(b.model)}'`;
  return undefined;
}

function finishReason(m: MessageReply): string {
  return m.finishReason ?? (m.toolCalls && m.toolCalls.length > 0 ? 'TOOL_CALL' : 'COMPLETE');
}

function usageOf(m: MessageReply): CohereServerUsage {
  if (m.usage) return m.usage;
  const out = words(m.text ?? '').length + (m.toolCalls?.length ?? 0) * 8;
  // Cohere bills the user's tokens; `tokens` also counts its prompt template.
  return { billed_units: { input_tokens: 12, output_tokens: out }, tokens: { input_tokens: 204, output_tokens: out }, cached_tokens: 0 };
}

function bufferedChat(id: string, m: MessageReply): unknown {
  const message: Record<string, unknown> = { role: 'assistant' };
  if (m.toolPlan !== undefined) message.tool_plan = m.toolPlan;
  if (m.toolCalls && m.toolCalls.length > 0) {
    message.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  const content: unknown[] = [];
  if (m.thinking !== undefined) content.push({ type: 'thinking', thinking: m.thinking });
  if (m.text !== undefined) content.push({ type: 'text', text: m.text });
  if (content.length > 0) message.content = content;
  return { id, message, finish_reason: finishReason(m), usage: usageOf(m) };
}

function streamEvents(id: string, m: MessageReply): { event?: string; data: unknown }[] {
  const ev: { event?: string; data: unknown }[] = [];
  const push = (type: string, rest: Record<string, unknown>) => ev.push({ event: type, data: { type, ...rest } });
  ev.push({
    event: 'message-start',
    data: { id, type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } },
  });
  if (m.toolPlan) for (const w of words(m.toolPlan)) push('tool-plan-delta', { delta: { message: { tool_plan: w } } });
  let index = 0;
  if (m.thinking !== undefined) {
    push('content-start', { index, delta: { message: { content: { type: 'thinking', thinking: '' } } } });
    for (const w of words(m.thinking)) push('content-delta', { index, delta: { message: { content: { thinking: w } } } });
    push('content-end', { index });
    index++;
  }
  if (m.text !== undefined) {
    push('content-start', { index, delta: { message: { content: { type: 'text', text: '' } } } });
    for (const w of words(m.text)) push('content-delta', { index, delta: { message: { content: { text: w } } } });
    push('content-end', { index });
    index++;
  }
  for (const c of m.toolCalls ?? []) {
    push('tool-call-start', { index, delta: { message: { tool_calls: { id: c.id, type: 'function', function: { name: c.name, arguments: '' } } } } });
    for (const piece of halves(c.arguments)) push('tool-call-delta', { index, delta: { message: { tool_calls: { function: { arguments: piece } } } } });
    push('tool-call-end', { index });
    index++;
  }
  push('message-end', { delta: { finish_reason: finishReason(m), ...(m.error !== undefined ? { error: m.error } : {}), usage: usageOf(m) } });
  ev.push({ data: '[DONE]' });
  return ev;
}

function streamChat(res: ServerResponse, id: string, m: MessageReply): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const frames = streamEvents(id, m).map((e) => sseEvent(typeof e.data === 'string' ? e.data : JSON.stringify(e.data), e.event));
  writeFrames(res, frames, m.cutAfter);
}

function defaultVector(text: string): number[] {
  return [text.length / 100, 0.25, -0.5];
}
