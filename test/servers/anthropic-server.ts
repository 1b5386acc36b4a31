/**
 * A loopback stand-in for the Anthropic Messages API (`POST /v1/messages`,
 * anthropic-version 2023-06-01), faithful enough that the official
 * @anthropic-ai/sdk talks to it unchanged (see anthropic-server.test.ts).
 *
 * Replies are scripted: `enqueue()` queues them in order; when the queue is
 * empty the `handler` (if any) is asked, else a short text answer is sent.
 * Each reply is rendered buffered or as SSE according to the request's
 * `stream` flag, with Anthropic's exact event sequence. Faults: an error status
 * with Anthropic's error body, an `error` event mid-stream, a stream cut after
 * N events (clean end or socket reset), a dropped connection.
 *
 * Like the real API it validates what it can cheaply: the version header, the
 * API key (when one is configured; `x-api-key` or `Authorization: Bearer`),
 * no sampling parameters on version 2026-10-21, the required fields, roles, non-blank text,
 * no trailing whitespace on a final assistant prefill, tool results that
 * answer the previous assistant turn's tool_use ids, tool_use ids unique in
 * the whole conversation, stop sequences that are not whitespace only,
 * prompt-cache breakpoints (`cache_control`: its shape, at most four), and
 * extended thinking's rules (thinkingProblem).
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { sseEvent, startScriptedServer, type ScriptedServer } from './scripted-server.js';
import { shownThinking, thinkingProblem } from './anthropic-thinking.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined if it was not JSON). */
  body: Record<string, unknown> | undefined;
}

export interface ToolUseSpec {
  id?: string;
  name: string;
  input: Record<string, unknown>;
}

export interface MessageReply {
  kind?: 'message';
  /** A text block, first. */
  text?: string;
  /** tool_use blocks, after the text. */
  toolUses?: ToolUseSpec[];
  /** A thinking block before everything else (its deltas are streamed too). */
  thinking?: string;
  /** A redacted_thinking block (its encrypted `data`) after the thinking block: streamed whole in its content_block_start. */
  redactedThinking?: string;
  /** Default: `tool_use` when there are tool uses, else `end_turn`. */
  stopReason?: string;
  stopSequence?: string | null;
  /** Default: the requested model. */
  model?: string;
  id?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_creation_input_tokens?: number;
    cache_read_input_tokens?: number;
  };
  headers?: Record<string, string>;
  /** Characters per text_delta / input_json_delta when streaming (default 8). */
  chunkSize?: number;
  /** Streaming: send only the first N events, then end the body (`end`) or reset the socket (`destroy`). */
  cutAfterEvents?: number;
  cutMode?: 'end' | 'destroy';
  /** Streaming: after N events send an `error` event of this type and end. */
  errorAfterEvents?: { after: number; type: string; message: string };
  /** Reset the socket without answering at all. */
  dropConnection?: boolean;
}

export interface ErrorReply {
  kind: 'error';
  status: number;
  /** Anthropic error type, e.g. `overloaded_error`. */
  type: string;
  message: string;
  headers?: Record<string, string>;
}

export type AnthropicReply = MessageReply | ErrorReply;
export type AnthropicHandler = (req: RecordedRequest) => AnthropicReply | Promise<AnthropicReply>;

export interface AnthropicServerOptions {
  /** When set, requests must carry it as `x-api-key`. */
  apiKey?: string;
  /** Refuse temperature and top_p together, as Claude Sonnet 4.5 and later models do. */
  oneSamplingParameter?: boolean;
}

/** `url` is the origin, without `/v1`: what the SDK takes as baseURL. */
export type AnthropicServer = ScriptedServer<RecordedRequest, AnthropicReply>;

export const DEFAULT_REPLY_TEXT = 'Hello from the loopback Anthropic server.';

type Json = Record<string, unknown>;
type Block = Json & { type: string };

export async function startAnthropicServer(
  handler?: AnthropicHandler,
  options: AnthropicServerOptions = {},
): Promise<AnthropicServer> {
  let seq = 0;

  return startScriptedServer<RecordedRequest, AnthropicReply>(
    async (req, res, ex) => {
      const n = ++seq;
      let body: Json | undefined;
      try {
        const v: unknown = JSON.parse(ex.body);
        body = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0]!;
      const rec: RecordedRequest = { method: req.method ?? '', path, headers: req.headers, body };
      ex.record(rec);

      if (req.method !== 'POST' || path !== '/v1/messages') {
        return sendError(res, n, { kind: 'error', status: 404, type: 'not_found_error', message: 'Not found' });
      }
      if (!req.headers['anthropic-version']) {
        return sendError(res, n, invalid('anthropic-version: header is required'));
      }
      // SDKs before 1.0 send `x-api-key`, later ones `Authorization: Bearer`; the API takes both.
      const key = req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer /i, '');
      if (options.apiKey !== undefined && key !== options.apiKey) {
        return sendError(res, n, { kind: 'error', status: 401, type: 'authentication_error', message: 'invalid x-api-key' });
      }
      if (body === undefined) return sendError(res, n, invalid('There was an issue with the format of your request: body is not a JSON object'));
      const problem =
        options.oneSamplingParameter && body.temperature !== undefined && body.top_p !== undefined
          ? '`temperature` and `top_p` cannot both be specified for this model. Please use only one.'
          : validate(body, String(req.headers['anthropic-version']));
      if (problem) return sendError(res, n, invalid(problem));

      const reply = ex.next() ?? (handler ? await handler(rec) : { text: DEFAULT_REPLY_TEXT });
      if (reply.kind === 'error') return sendError(res, n, reply);
      if (reply.dropConnection) return void res.socket?.destroy();
      const message = buildMessage(reply, body, n);
      if (body.stream === true) return sendStream(res, n, reply, message);
      res.writeHead(200, { 'content-type': 'application/json', ...commonHeaders(n), ...reply.headers });
      res.end(JSON.stringify(message));
    },
    (res, err) => sendError(res, 0, { kind: 'error', status: 500, type: 'api_error', message: String(err) }),
  );
}

function invalid(message: string): ErrorReply {
  return { kind: 'error', status: 400, type: 'invalid_request_error', message };
}

function commonHeaders(n: number): Record<string, string> {
  return {
    'request-id': `req_loopback_${n}`,
    'anthropic-ratelimit-requests-limit': '1000',
    'anthropic-ratelimit-requests-remaining': '999',
    'anthropic-ratelimit-requests-reset': new Date(Date.now() + 60_000).toISOString(),
  };
}

function sendError(res: ServerResponse, n: number, e: ErrorReply): void {
  if (res.headersSent) return void res.end();
  res.writeHead(e.status, { 'content-type': 'application/json', ...commonHeaders(n), ...e.headers });
  res.end(JSON.stringify({ type: 'error', error: { type: e.type, message: e.message }, request_id: `req_loopback_${n}` }));
}

/** The checks the real API makes that an adapter is most likely to get wrong. */
function validate(body: Json, version: string): string | undefined {
  if (typeof body.model !== 'string') return 'model: Field required';
  if (version >= '2026-10-21') {
    // API version 2026-10-21 removed the sampling parameters.
    for (const p of ['temperature', 'top_p', 'top_k']) {
      if (body[p] !== undefined) return `${p}: Extra inputs are not permitted in API version ${version}`;
    }
  }
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
    return 'system: Input should be a valid string or list';
  }
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.some((s) => typeof s !== 'string' || s.trim() === '')) {
    return 'stop_sequences: each stop sequence must contain non-whitespace';
  }
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  let previousToolUses = new Set<string>();
  // Across the whole conversation, not only one turn.
  const allToolUses = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Json;
    if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const blocks: Block[] =
      typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? (m.content as Block[]) : [];
    if (blocks.length === 0 && !(i === messages.length - 1 && m.role === 'assistant')) {
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    }
    const toolUses = new Set<string>();
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j]!;
      if (b.type === 'text' && (typeof b.text !== 'string' || b.text.trim() === '')) {
        return `messages.${i}.content.${j}.text: text content blocks must contain non-whitespace text`;
      }
      if (b.type === 'tool_use') {
        if (m.role !== 'assistant') return `messages.${i}.content.${j}: tool_use blocks are only allowed in assistant messages`;
        if (b.input === null || typeof b.input !== 'object' || Array.isArray(b.input)) {
          return `messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`;
        }
        if (allToolUses.has(String(b.id))) return `messages.${i}.content.${j}: \`tool_use\` ids must be unique`;
        allToolUses.add(String(b.id));
        toolUses.add(String(b.id));
      }
      if (b.type === 'tool_result' && !previousToolUses.has(String(b.tool_use_id))) {
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(b.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
    if (i === messages.length - 1 && m.role === 'assistant') {
      const last = blocks[blocks.length - 1];
      if (last?.type === 'text' && /\s$/.test(String(last.text))) return 'final assistant content cannot end with trailing whitespace';
    }
    previousToolUses = toolUses;
  }
  return thinkingProblem(body) ?? cacheControlProblem(body);
}

/** Prompt-cache breakpoints: Anthropic's one shape, and at most four a request (tools, system, messages and tool results alike). */
function cacheControlProblem(body: Json): string | undefined {
  const marked: unknown[] = [];
  const collect = (blocks: unknown): void => {
    if (!Array.isArray(blocks)) return;
    for (const b of blocks as Json[]) {
      if (b?.cache_control !== undefined) marked.push(b.cache_control);
      collect(b?.content);
    }
  };
  collect(body.tools);
  collect(body.system);
  for (const m of Array.isArray(body.messages) ? (body.messages as Json[]) : []) collect(m.content);
  for (const c of marked as Json[]) {
    if (c?.type !== 'ephemeral') return "cache_control.type: Input should be 'ephemeral'";
    if (c.ttl !== undefined && c.ttl !== '5m' && c.ttl !== '1h') return "cache_control.ttl: Input should be '5m' or '1h'";
  }
  if (marked.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marked.length}.`;
  return undefined;
}

interface BuiltMessage extends Json {
  id: string;
  model: string;
  content: Block[];
  stop_reason: string;
  usage: Required<NonNullable<MessageReply['usage']>> & { service_tier: string };
}

function buildMessage(reply: MessageReply, body: Json, n: number): BuiltMessage {
  const content: Block[] = [];
  if (reply.thinking !== undefined) content.push({ type: 'thinking', thinking: shownThinking(body, reply.thinking), signature: 'c2lnbmF0dXJl' });
  if (reply.redactedThinking !== undefined) content.push({ type: 'redacted_thinking', data: reply.redactedThinking });
  const text = reply.text ?? (reply.toolUses?.length ? undefined : DEFAULT_REPLY_TEXT);
  if (text !== undefined) content.push({ type: 'text', text });
  (reply.toolUses ?? []).forEach((t, i) => {
    content.push({ type: 'tool_use', id: t.id ?? `toolu_loopback_${n}_${i}`, name: t.name, input: t.input });
  });
  const out = Math.ceil((text?.length ?? 0) / 4) + 12 * (reply.toolUses?.length ?? 0);
  return {
    id: reply.id ?? `msg_loopback_${n}`,
    type: 'message',
    role: 'assistant',
    model: reply.model ?? String(body.model),
    content,
    stop_reason: reply.stopReason ?? (reply.toolUses?.length ? 'tool_use' : 'end_turn'),
    stop_sequence: reply.stopSequence ?? null,
    usage: {
      input_tokens: reply.usage?.input_tokens ?? Math.ceil(JSON.stringify(body.messages).length / 4),
      cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? 0,
      output_tokens: reply.usage?.output_tokens ?? out,
      service_tier: 'standard',
    },
  };
}

/** The SSE events Anthropic sends for `message`, in order. */
export function messageEvents(message: BuiltMessage, chunkSize = 8): { event: string; data: Json }[] {
  const events: { event: string; data: Json }[] = [];
  const add = (data: Json & { type: string }) => events.push({ event: data.type, data });
  add({
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  const split = (s: string) => {
    const out: string[] = [];
    for (let i = 0; i < s.length; i += chunkSize) out.push(s.slice(i, i + chunkSize));
    return out;
  };
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      add({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      if (index === 0) add({ type: 'ping' });
      for (const text of split(String(block.text))) add({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    } else if (block.type === 'tool_use') {
      add({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      add({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const partial_json of split(JSON.stringify(block.input))) {
        add({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    } else if (block.type === 'thinking') {
      add({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of split(String(block.thinking))) {
        add({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
      }
      add({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'redacted_thinking') {
      add({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: block.data } });
    }
    add({ type: 'content_block_stop', index });
  });
  add({
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence ?? null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  add({ type: 'message_stop' });
  return events;
}

function sendStream(res: ServerResponse, n: number, reply: MessageReply, message: BuiltMessage): void {
  let events = messageEvents(message, reply.chunkSize);
  let error: Json | undefined;
  if (reply.errorAfterEvents) {
    events = events.slice(0, reply.errorAfterEvents.after);
    error = { type: 'error', error: { type: reply.errorAfterEvents.type, message: reply.errorAfterEvents.message } };
  }
  const cut = reply.cutAfterEvents !== undefined && reply.cutAfterEvents < events.length;
  if (cut) events = events.slice(0, reply.cutAfterEvents);
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    ...commonHeaders(n),
    ...reply.headers,
  });
  for (const e of events) res.write(sseEvent(JSON.stringify(e.data), e.event));
  if (error) res.write(sseEvent(JSON.stringify(error), 'error'));
  if (cut && reply.cutMode === 'destroy') {
    // Close the connection mid-body (after flushing what was written): the
    // chunked body never gets its terminator, as when a proxy drops the line.
    res.socket?.end();
    return;
  }
  res.end();
}
