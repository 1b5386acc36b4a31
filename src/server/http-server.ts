/**
 * The node:http adapter over the gateway: routes, body limits, auth, JSON and
 * SSE writing, the contract's error shape, graceful shutdown. Nothing a client
 * sends may crash the process: every handler's failure ends in an error
 * response, never an unhandled rejection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Gateway } from '../core/gateway.js';
import { GatewayError } from '../core/errors.js';
import { Authenticator, presentedKey } from './auth.js';
import { parseJsonBody, readBody } from './body.js';
import { internalError, routingHeaders, sendError, sendJson, sendRaw } from './respond.js';
import { writeSse } from './sse.js';

/** What the observability layer offers the server; all optional. */
export interface ServerHooks {
  /** `GET /traces?…` → body, or a GatewayError for bad filters. */
  traces?(params: URLSearchParams): unknown;
  trace?(id: string): unknown | undefined;
  metrics?(): Promise<{ contentType: string; body: string }>;
  /** Readiness details beyond "config loaded" (state backend health). */
  readiness?(): { ok: boolean; [key: string]: unknown };
  /** Internal failures (not client errors): for the log, never request content. */
  onInternalError?(err: unknown, requestId?: string): void;
}

export interface SwitchyardServer {
  server: Server;
  listen(port: number, host: string): Promise<{ host: string; port: number; url: string }>;
  /** Stop accepting, let in-flight requests (streams too) finish up to `graceMs`, then close. */
  close(graceMs?: number): Promise<void>;
  readonly inFlight: number;
}

export function createSwitchyardServer(gateway: Gateway, hooks: ServerHooks = {}): SwitchyardServer {
  const { config } = gateway;
  const auth = new Authenticator(config.keys);
  const maxBody = config.server.maxBodyBytes;
  const adminKey = config.server.adminKey;
  let inFlight = 0;
  let closing = false;
  let idle: (() => void) | undefined;

  const server = createServer({ requestTimeout: 60_000, headersTimeout: 30_000, keepAliveTimeout: 65_000 }, (req, res) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0) idle?.();
    });
    if (closing) res.setHeader('connection', 'close');
    handle(req, res).catch((err) => {
      hooks.onInternalError?.(err);
      if (!res.headersSent) sendError(res, internalError());
      else res.destroy();
    });
  });
  // Malformed HTTP (bad request line, oversized headers): answer 400/431 and drop the socket.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable) return socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    socket.end(`HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    try {
      if (path === '/v1/chat/completions' || path === '/chat/completions') {
        if (method !== 'POST') throw methodNotAllowed('POST');
        return await chat(req, res);
      }
      if (path === '/v1/embeddings' || path === '/embeddings') {
        if (method !== 'POST') throw methodNotAllowed('POST');
        return await embeddings(req, res);
      }
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed('GET');
      if (path === '/v1/models' || path === '/models') {
        auth.authenticate(req.headers);
        return sendJson(res, 200, gateway.models());
      }
      if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
      if (path === '/readyz') {
        const r = hooks.readiness?.() ?? { ok: true };
        return sendJson(res, closing ? 503 : r.ok ? 200 : 503, { status: closing ? 'shutting_down' : r.ok ? 'ready' : 'degraded', config: 'loaded', ...r });
      }
      if (path === '/metrics') {
        admin(req);
        if (!hooks.metrics) throw notFound(path);
        const m = await hooks.metrics();
        return sendRaw(res, 200, m.body, undefined, m.contentType);
      }
      if (path === '/traces') {
        admin(req);
        if (!hooks.traces) throw notFound(path);
        return sendJson(res, 200, hooks.traces(new URLSearchParams(q === -1 ? '' : url.slice(q + 1))));
      }
      if (path.startsWith('/traces/')) {
        admin(req);
        const t = hooks.trace?.(decodeURIComponent(path.slice('/traces/'.length)));
        if (t === undefined) throw new GatewayError(404, 'not_found', 'No trace with that id');
        return sendJson(res, 200, t);
      }
      throw notFound(path);
    } catch (err) {
      if (err instanceof GatewayError) return sendError(res, err, headerOf(req, 'x-request-id'));
      throw err;
    }
  }

  function admin(req: IncomingMessage): void {
    if (!adminKey) return;
    if (presentedKey(req.headers) !== adminKey) throw new GatewayError(401, 'invalid_api_key', 'This endpoint needs the admin key');
  }

  /** Aborts when the client goes away before the response is complete. */
  function clientSignal(res: ServerResponse): AbortSignal {
    const ac = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) ac.abort();
    });
    return ac.signal;
  }

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = auth.authenticate(req.headers);
    const body = parseJsonBody(await readBody(req, maxBody));
    const result = await gateway.chat(body, { key, headers: req.headers, signal: clientSignal(res) });
    const headers = routingHeaders(result.meta);
    if (result.stream) {
      await writeSse(res, result, headers);
      return;
    }
    if (result.raw) sendRaw(res, 200, result.raw, headers);
    else sendJson(res, 200, result.body, headers);
  }

  async function embeddings(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const key = auth.authenticate(req.headers);
    const body = parseJsonBody(await readBody(req, maxBody));
    const result = await gateway.embeddings(body, { key, headers: req.headers, signal: clientSignal(res) });
    const headers = routingHeaders(result.meta);
    if (result.raw) sendRaw(res, 200, result.raw, headers);
    else sendJson(res, 200, result.body, headers);
  }

  return {
    server,
    get inFlight() {
      return inFlight;
    },
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const a = server.address() as AddressInfo;
          const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve({ host: a.address, port: a.port, url: `http://${h}:${a.port}` });
        });
      });
    },
    async close(graceMs = config.server.shutdownGraceMs) {
      closing = true;
      const stopped = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, graceMs);
          idle = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      server.closeAllConnections();
      await stopped;
    },
  };
}

const headerOf = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};
const notFound = (path: string) => new GatewayError(404, 'not_found', `No route for ${path.slice(0, 100)}`);
const methodNotAllowed = (allow: string) => new GatewayError(405, 'method_not_allowed', `Use ${allow} for this route`);
