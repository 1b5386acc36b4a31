/**
 * A loopback fault server: a real node:http server speaking OpenAI's wire format
 * (`POST /v1/chat/completions` buffered and SSE, `POST /v1/embeddings`,
 * `GET /v1/models`) that misbehaves over real sockets as its FaultScript says:
 * 429 with Retry-After, any status, a request never answered, a reset socket, a
 * stream cut mid-way. A free tier (`rpmLimit`) also reports its state in
 * OpenAI's `x-ratelimit-*-requests` headers on every answer, 200 or 429.
 * Tests point real clients (the openai SDK, our adapters, the whole gateway)
 * at it; the decisions and replies are the same code the in-process
 * `simulated` adapter uses.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { systemClock, systemRandom, type Clock, type Random } from '../../core/clock.js';
import type { SimulateConfig } from '../../config/types.js';
import type { ChatRequest, EmbeddingsRequest, ErrorBody, ModelList } from '../../protocol/openai.js';
import { FaultScript, type Plan } from './script.js';
import { simulateReply, toCompletion, type ReplyMeta } from './reply.js';
import { replyChunks } from './chunks.js';
import { simulateEmbeddings } from './embeddings.js';
import { rateLimitBody, statusBody } from './error-body.js';

export interface RecordedRequest {
  method: string;
  /** Path with query string, as received. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when there was none. */
  body: unknown;
}

export interface FaultServer {
  /** `http://127.0.0.1:PORT/v1`: the base URL an OpenAI SDK takes. */
  url: string;
  port: number;
  script: FaultScript;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export interface FaultServerOptions {
  simulate?: Partial<SimulateConfig>;
  clock?: Clock;
  random?: Random;
  /** Model named in replies; default: the request's `model`. */
  model?: string;
  /** Provider named in the default reply text; default `fault`. */
  providerId?: string;
}

/** Fast by default: tests opt into latency and pacing. tokensPerSecond 0 = unpaced. */
const SERVER_DEFAULTS: SimulateConfig = { latencyMs: 0, ttftMs: 0, tokensPerSecond: 0, faults: [] };

const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };

export async function startFaultServer(opts: FaultServerOptions = {}): Promise<FaultServer> {
  const sim: SimulateConfig = { ...SERVER_DEFAULTS, ...opts.simulate, faults: opts.simulate?.faults ?? [] };
  const clock = opts.clock ?? systemClock;
  const providerId = opts.providerId ?? 'fault';
  const script = new FaultScript(sim, clock, opts.random ?? systemRandom);
  const requests: RecordedRequest[] = [];
  /** One per request in flight: aborted when its client leaves or the server closes. */
  const inflight = new Set<AbortController>();
  const sockets = new Set<Socket>();
  let seq = 0;

  const meta = (model: string): ReplyMeta => {
    const now = clock.now();
    return { id: `chatcmpl-sim-${now.toString(36)}${(++seq).toString(36)}`, created: Math.floor(now / 1000), model: opts.model ?? model };
  };

  /** A free tier's state as OpenAI reports its own (`x-ratelimit-*-requests`), so clients can pace by it. */
  function limitHeaders(): Record<string, string> | undefined {
    const s = script.freeTierStatus();
    if (!s) return undefined;
    return {
      'x-ratelimit-limit-requests': String(s.limit),
      'x-ratelimit-remaining-requests': String(s.remaining),
      'x-ratelimit-reset-requests': `${Math.max(0, Math.ceil(s.resetMs))}ms`,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
    const text = await readBody(req);
    let body: unknown;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: text });
        return sendJson(res, 400, invalid('We could not parse the JSON body of your request.'));
      }
    }
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
    const path = (req.url ?? '').split('?')[0];
    const route = `${req.method} ${path}`;

    if (route === 'GET /v1/models') {
      const list: ModelList = {
        object: 'list',
        data: [{ id: opts.model ?? 'simulated', object: 'model', created: Math.floor(clock.now() / 1000), owned_by: providerId }],
      };
      return sendJson(res, 200, list);
    }
    if (route === 'POST /v1/chat/completions') {
      if (!isObject(body) || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
        return sendJson(res, 400, invalid("'model' and 'messages' are required."));
      }
      return chat(req, res, body as ChatRequest, signal);
    }
    if (route === 'POST /v1/embeddings') {
      if (!isObject(body) || typeof body.model !== 'string' || body.input === undefined) {
        return sendJson(res, 400, invalid("'model' and 'input' are required."));
      }
      const request = body as EmbeddingsRequest;
      if (!(await answer(req, res, script.decide(), signal, false))) return;
      return sendJson(res, 200, simulateEmbeddings(request, opts.model ?? request.model), limitHeaders());
    }
    return sendJson(res, 404, { error: { message: `Unknown route ${route}`, type: 'invalid_request_error', param: null, code: 'unknown_url' } });
  }

  async function chat(req: IncomingMessage, res: ServerResponse, body: ChatRequest, signal: AbortSignal): Promise<void> {
    const plan = script.decide();
    if (!(await answer(req, res, plan, signal, body.stream === true))) return;
    const reply = simulateReply(body, { provider: providerId, model: opts.model ?? body.model }, sim.reply);
    if (body.stream !== true) return sendJson(res, 200, toCompletion(reply, meta(body.model)), limitHeaders());

    const cutAfter = plan.kind === 'stream_abort' ? plan.afterChunks : undefined;
    res.writeHead(200, { ...SSE_HEADERS, ...limitHeaders() });
    res.flushHeaders();
    let flushed: Promise<void> = Promise.resolve();
    const chunks = replyChunks(reply, meta(body.model), sim, clock, signal, {
      startAt: clock.now(),
      includeUsage: body.stream_options?.include_usage === true,
      cutAfter,
      stallAfter: plan.kind === 'stall' ? plan.afterChunks : undefined,
    });
    for await (const chunk of chunks) {
      const line = `data: ${JSON.stringify(chunk)}\n\n`;
      flushed = new Promise((resolve) => res.write(line, () => resolve()));
    }
    if (cutAfter !== undefined) {
      // Let the chunks reach the client, then cut: no terminating chunk, no [DONE].
      await flushed;
      req.socket.destroy();
      return;
    }
    res.end('data: [DONE]\n\n');
  }

  /**
   * Wait the latency, then answer a fault plan. True when the caller should
   * reply with a 2xx (ok, or a stream that will be cut).
   */
  async function answer(req: IncomingMessage, res: ServerResponse, plan: Plan, signal: AbortSignal, streaming: boolean): Promise<boolean> {
    // Hang: never answer; the socket is freed when the client leaves or close() runs.
    if (plan.kind === 'hang' || (plan.kind === 'stall' && !streaming)) return false;
    const delay = sim.latencyMs + (plan.kind === 'ok' ? plan.extraDelayMs : 0);
    if (delay > 0) await clock.sleep(delay, signal);
    switch (plan.kind) {
      case 'ok':
        return true;
      case 'stall':
        return true;
      case 'stream_abort':
        if (streaming) return true;
        req.socket.destroy();
        return false;
      case 'reset':
        req.socket.destroy();
        return false;
      case 'rate_limit':
        sendJson(res, 429, rateLimitBody(), {
          ...limitHeaders(),
          ...(plan.retryAfterS === undefined ? undefined : { 'retry-after': String(plan.retryAfterS) }),
        });
        return false;
      case 'status':
        sendJson(res, plan.status, statusBody(plan.status, plan.message));
        return false;
    }
  }

  const server = createServer((req, res) => {
    const ac = new AbortController();
    inflight.add(ac);
    res.on('close', () => {
      inflight.delete(ac);
      if (!res.writableFinished) ac.abort(new Error('client closed the connection'));
    });
    handle(req, res, ac.signal).catch(() => {
      // Aborted (client gone, server closing) or a bug: never leave a socket half-answered.
      if (!res.headersSent && !ac.signal.aborted) sendJson(res, 500, statusBody(500));
      else req.socket.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    script,
    requests,
    close() {
      for (const ac of inflight) ac.abort(new Error('fault server closed'));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Hanging requests and idle keep-alive sockets would hold close() forever.
      for (const socket of sockets) socket.destroy();
      return closed;
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS);
  res.end(text);
}

function invalid(message: string): ErrorBody {
  return { error: { message, type: 'invalid_request_error', param: null, code: null } };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
