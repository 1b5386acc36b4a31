/**
 * A loopback Azure OpenAI server speaking the exact wire format of
 * `/openai/deployments/{deployment}/chat/completions?api-version=...` (with
 * Azure's content-filter annotations and its choice-less first stream chunk)
 * and `/embeddings`. Scriptable per request: a message (text, tool calls,
 * finish reason, usage, a stream cut after N chunks), an error status + body,
 * or raw bytes. Requests are recorded. The `openai` package's `AzureOpenAI`
 * client is the judge of its faithfulness (azure-server.test.ts).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { halves, sendJson as json, sendRaw, sseEvent, startScriptedServer, words, writeFrames, type ScriptedServer } from './scripted-server.js';

export type AzureReply =
  | {
      kind: 'message';
      text?: string;
      toolCalls?: { id: string; name: string; arguments: string }[];
      /** Default: tool_calls with tool calls, else stop. */
      finishReason?: string;
      usage?: { prompt_tokens: number; completion_tokens: number };
      /** Streams only: destroy the socket after this many SSE events. */
      cutAfter?: number;
    }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; contentType?: string; body: string }
  | { kind: 'embed'; vectors: number[][]; promptTokens?: number };

export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  path: string;
  deployment: string | undefined;
  apiVersion: string | null;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export type AzureServer = ScriptedServer<RecordedRequest, AzureReply>;

export interface AzureServerOptions {
  /** When set, requests without this `api-key` get Azure's 401. */
  apiKey?: string;
  /** When set, other deployment names get Azure's 404 DeploymentNotFound. */
  deployments?: string[];
  /** The model behind every deployment, as Azure reports it. */
  model?: string;
}

const ROUTE = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/;
const DEFAULT_TEXT = 'Hello from Azure.';
const SAFE = { filtered: false, severity: 'safe' };
const FILTER_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: FILTER_RESULTS }];
const FINGERPRINT = 'fp_b705f0c291';

export async function startAzureServer(opts: AzureServerOptions = {}): Promise<AzureServer> {
  const model = opts.model ?? 'gpt-4o-2024-11-20';
  let seq = 0;

  return startScriptedServer<RecordedRequest, AzureReply>((req, res, ex) => {
    let body: unknown = ex.body;
    try {
      body = ex.body ? JSON.parse(ex.body) : undefined;
    } catch {
      // recorded as text; answered below
    }
    const url = new URL(req.url ?? '/', 'http://azure.local');
    const route = ROUTE.exec(url.pathname);
    const deployment = route ? decodeURIComponent(route[1]!) : undefined;
    const apiVersion = url.searchParams.get('api-version');
    ex.record({ method: req.method ?? 'GET', path: req.url ?? '/', deployment, apiVersion, headers: req.headers, body });

    if (opts.apiKey !== undefined && req.headers['api-key'] !== opts.apiKey) {
      return json(res, 401, {
        error: {
          code: '401',
          message:
            'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
        },
      });
    }
    if (req.method !== 'POST' || !route || !apiVersion) return json(res, 404, { error: { code: '404', message: 'Resource not found' } });
    if (opts.deployments && !opts.deployments.includes(deployment!)) {
      return json(res, 404, {
        error: {
          code: 'DeploymentNotFound',
          message:
            'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
        },
      });
    }
    if (typeof body !== 'object' || body === null) {
      return json(res, 400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null } });
    }
    const b = body as Record<string, unknown>;

    const reply = ex.next();
    if (reply?.kind === 'error') return json(res, reply.status, reply.body, reply.headers);
    if (reply?.kind === 'raw') return sendRaw(res, reply.status ?? 200, reply.contentType ?? 'text/event-stream', reply.body);
    const id = `chatcmpl-AZ${String(++seq).padStart(8, '0')}`;
    const created = 1_735_689_600 + seq;
    if (route[2] === 'embeddings') {
      const input = typeof b.input === 'string' ? [b.input] : Array.isArray(b.input) ? (b.input as string[]) : [];
      const vectors = reply?.kind === 'embed' ? reply.vectors : input.map(defaultVector);
      const tokens = reply?.kind === 'embed' && reply.promptTokens !== undefined ? reply.promptTokens : input.length * 2;
      const base64 = b.encoding_format === 'base64';
      return json(res, 200, {
        object: 'list',
        data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? float32Base64(v) : v })),
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      });
    }
    const message = reply?.kind === 'message' ? reply : { kind: 'message' as const, text: DEFAULT_TEXT };
    const meta = { id, created, model };
    if (b.stream === true) {
      const includeUsage = (b.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      stream(res, meta, message, includeUsage);
    } else {
      json(res, 200, buffered(meta, message));
    }
  });
}

type MessageReply = Extract<AzureReply, { kind: 'message' }>;
interface Meta {
  id: string;
  created: number;
  model: string;
}

function finishReason(m: MessageReply): string {
  return m.finishReason ?? (m.toolCalls && m.toolCalls.length > 0 ? 'tool_calls' : 'stop');
}

function usageOf(m: MessageReply): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const u = m.usage ?? { prompt_tokens: 19, completion_tokens: words(m.text ?? '').length + (m.toolCalls?.length ?? 0) * 9 };
  return { completion_tokens: u.completion_tokens, prompt_tokens: u.prompt_tokens, total_tokens: u.prompt_tokens + u.completion_tokens };
}

function buffered(meta: Meta, m: MessageReply): unknown {
  const message: Record<string, unknown> = { content: m.text ?? null, refusal: null, role: 'assistant' };
  if (m.toolCalls && m.toolCalls.length > 0) {
    message.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return {
    choices: [{ content_filter_results: FILTER_RESULTS, finish_reason: finishReason(m), index: 0, logprobs: null, message }],
    created: meta.created,
    id: meta.id,
    model: meta.model,
    object: 'chat.completion',
    prompt_filter_results: PROMPT_FILTER,
    system_fingerprint: FINGERPRINT,
    usage: usageOf(m),
  };
}

function chunks(meta: Meta, m: MessageReply, includeUsage: boolean): unknown[] {
  const out: unknown[] = [];
  const chunk = (choice: Record<string, unknown> | null, usage?: unknown) =>
    out.push({
      choices: choice ? [{ content_filter_results: {}, finish_reason: null, index: 0, logprobs: null, ...choice }] : [],
      created: meta.created,
      id: meta.id,
      model: meta.model,
      object: 'chat.completion.chunk',
      system_fingerprint: FINGERPRINT,
      ...(usage ? { usage } : {}),
    });
  // Azure's first event: the prompt's filter verdict, before any choice.
  out.push({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER });
  chunk({ delta: { content: '', refusal: null, role: 'assistant' } });
  for (const w of words(m.text ?? '')) chunk({ content_filter_results: FILTER_RESULTS, delta: { content: w } });
  (m.toolCalls ?? []).forEach((c, index) => {
    chunk({ delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] } });
    for (const piece of halves(c.arguments)) chunk({ delta: { tool_calls: [{ index, function: { arguments: piece } }] } });
  });
  chunk({ delta: {}, finish_reason: finishReason(m) });
  if (includeUsage) chunk(null, usageOf(m));
  return out;
}

function stream(res: ServerResponse, meta: Meta, m: MessageReply, includeUsage: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const frames = [...chunks(meta, m, includeUsage).map((c) => JSON.stringify(c)), '[DONE]'].map((data) => sseEvent(data));
  writeFrames(res, frames, m.cutAfter);
}

function defaultVector(text: string): number[] {
  return [text.length / 100, 0.5, -0.25];
}

function float32Base64(v: number[]): string {
  const buf = Buffer.allocUnsafe(v.length * 4);
  for (let i = 0; i < v.length; i++) buf.writeFloatLE(v[i]!, i * 4);
  return buf.toString('base64');
}
