/**
 * A loopback Ollama server speaking the exact wire format of `/api/chat`
 * (NDJSON streaming by default, one JSON object with `stream: false`) and
 * `/api/embed`. Scriptable per request: a message (text, thinking, tool calls,
 * done reason, token counts, a stream cut after N lines), an `{"error"}` with a
 * status, or raw bytes. Requests are recorded. The official `ollama` SDK is
 * the judge of its faithfulness (ollama-server.test.ts).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { sendRaw, sendText, startScriptedServer, words, writeFrames, type ScriptedServer } from './scripted-server.js';

export type OllamaReply =
  | {
      kind: 'message';
      text?: string;
      thinking?: string;
      /** Ollama's shape: arguments are an object; `id` only from newer servers. */
      toolCalls?: { id?: string; name: string; arguments: Record<string, unknown> }[];
      doneReason?: string;
      promptEvalCount?: number;
      evalCount?: number;
      /** Streams only: destroy the socket after this many NDJSON lines. */
      cutAfter?: number;
    }
  | { kind: 'error'; status: number; error: string }
  | { kind: 'raw'; status?: number; contentType?: string; body: string }
  | { kind: 'embed'; vectors: number[][]; promptEvalCount?: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type OllamaServer = ScriptedServer<RecordedRequest, OllamaReply>;

export interface OllamaServerOptions {
  /** When set, other model names get Ollama's 404 "not found, try pulling it first". */
  models?: string[];
  /** Models without thinking: asked to think, they get Ollama's 400 `"NAME" does not support thinking`. */
  noThinking?: string[];
}

/** What `think` takes: a switch, or gpt-oss's levels. */
const THINK_LEVELS = new Set(['low', 'medium', 'high']);

const DEFAULT_TEXT = 'Hello from Ollama.';
const NANOS_PER_MS = 1_000_000;

export async function startOllamaServer(opts: OllamaServerOptions = {}): Promise<OllamaServer> {
  let seq = 0;

  return startScriptedServer<RecordedRequest, OllamaReply>((req, res, ex) => {
    let body: unknown;
    let parseError: string | undefined;
    try {
      body = JSON.parse(ex.body);
    } catch (e) {
      body = ex.body;
      parseError = (e as Error).message;
    }
    const path = req.url ?? '/';
    ex.record({ method: req.method ?? 'GET', path, headers: req.headers, body });

    if (req.method !== 'POST' || (path !== '/api/chat' && path !== '/api/embed')) {
      return sendRaw(res, 404, 'text/plain', '404 page not found');
    }
    if (parseError !== undefined || typeof body !== 'object' || body === null) return json(res, 400, { error: parseError ?? 'invalid request' });
    const b = body as Record<string, unknown>;
    const model = b.model;
    if (typeof model !== 'string' || model === '') return json(res, 400, { error: 'model is required' });
    if (opts.models && !opts.models.includes(model)) {
      return json(res, 404, { error: `model "${model}" not found, try pulling it first` });
    }

    const think = b.think;
    if (think !== undefined && typeof think !== 'boolean' && !THINK_LEVELS.has(think as string)) {
      return json(res, 400, { error: `invalid think value: ${JSON.stringify(think)} (must be "high", "medium", "low", true, or false)` });
    }
    // Checked before a reply is taken, as Ollama refuses before it generates.
    if (path === '/api/chat' && think !== undefined && think !== false && opts.noThinking?.includes(model)) {
      return json(res, 400, { error: `${JSON.stringify(model)} does not support thinking` });
    }
    const reply = ex.next();
    if (reply?.kind === 'error') return json(res, reply.status, { error: reply.error });
    if (reply?.kind === 'raw') return sendRaw(res, reply.status ?? 200, reply.contentType ?? 'application/x-ndjson', reply.body);
    const createdAt = new Date(Date.UTC(2025, 0, 1) + ++seq * 1000).toISOString();
    if (path === '/api/embed') {
      const input = typeof b.input === 'string' ? [b.input] : Array.isArray(b.input) ? (b.input as string[]) : [];
      const vectors = reply?.kind === 'embed' ? reply.vectors : input.map(defaultVector);
      const count = reply?.kind === 'embed' && reply.promptEvalCount !== undefined ? reply.promptEvalCount : input.length * 2;
      return json(res, 200, { model, embeddings: vectors, total_duration: 14 * NANOS_PER_MS, load_duration: NANOS_PER_MS, prompt_eval_count: count });
    }
    const scripted = reply?.kind === 'message' ? reply : { kind: 'message' as const, text: DEFAULT_TEXT };
    // Told not to think, a thinking model sends no thinking.
    const message = think === false ? { ...scripted, thinking: undefined } : scripted;
    // Ollama streams unless told not to.
    if (b.stream === false) json(res, 200, buffered(model, createdAt, message));
    else stream(res, model, createdAt, message);
  });
}

type MessageReply = Extract<OllamaReply, { kind: 'message' }>;

function toolCallsOf(m: MessageReply): unknown[] | undefined {
  if (!m.toolCalls || m.toolCalls.length === 0) return undefined;
  return m.toolCalls.map((c, index) => {
    const fn = { index, name: c.name, arguments: c.arguments };
    return c.id ? { id: c.id, function: fn } : { function: fn };
  });
}

/** The metrics Ollama appends to its last object. */
function finalFields(m: MessageReply): Record<string, unknown> {
  const evalCount = m.evalCount ?? words(m.text ?? '').length + (m.toolCalls?.length ?? 0) * 10;
  return {
    done_reason: m.doneReason ?? 'stop',
    done: true,
    total_duration: 480 * NANOS_PER_MS,
    load_duration: 12 * NANOS_PER_MS,
    prompt_eval_count: m.promptEvalCount ?? 26,
    prompt_eval_duration: 90 * NANOS_PER_MS,
    eval_count: evalCount,
    eval_duration: 350 * NANOS_PER_MS,
  };
}

function buffered(model: string, createdAt: string, m: MessageReply): unknown {
  const message: Record<string, unknown> = { role: 'assistant', content: m.text ?? '' };
  if (m.thinking !== undefined) message.thinking = m.thinking;
  const calls = toolCallsOf(m);
  if (calls) message.tool_calls = calls;
  return { model, created_at: createdAt, message, ...finalFields(m) };
}

function lines(model: string, createdAt: string, m: MessageReply): string[] {
  const out: string[] = [];
  const line = (message: Record<string, unknown>) =>
    out.push(JSON.stringify({ model, created_at: createdAt, message: { role: 'assistant', ...message }, done: false }));
  for (const w of words(m.thinking ?? '')) line({ content: '', thinking: w });
  for (const w of words(m.text ?? '')) line({ content: w });
  const calls = toolCallsOf(m);
  if (calls) line({ content: '', tool_calls: calls });
  out.push(JSON.stringify({ model, created_at: createdAt, message: { role: 'assistant', content: '' }, ...finalFields(m) }));
  return out;
}

function stream(res: ServerResponse, model: string, createdAt: string, m: MessageReply): void {
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  writeFrames(res, lines(model, createdAt, m).map((line) => line + '\n'), m.cutAfter);
}

/** Ollama's JSON answers carry a charset. */
function json(res: ServerResponse, status: number, body: unknown): void {
  sendText(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function defaultVector(text: string): number[] {
  return [text.length / 100, -0.125, 0.75];
}
