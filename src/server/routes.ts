/**
 * The routes: which path and method go where (a browser's request checked
 * first), and the two routed endpoints (chat, embeddings) from body to
 * response. Everything per-gateway (auth index, admin key digest, the model
 * list, health bodies, the CORS policy) is built once here.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyConfig } from '../config/types.js';
import type { CallOptions, Gateway } from '../core/gateway.js';
import { ID_WORDS } from '../observability/events.js';
import { NODE_HEADERS } from '../core/request-lifecycle.js';
import { GatewayError } from '../core/errors.js';
import type { AttemptAborted } from '../resilience/abort.js';
import { asAnswer } from '../resilience/outcome.js';
import { isLoopbackHost } from '../config/loopback.js';
import { Authenticator, presentedKey } from './auth.js';
import { lingerOnClose, parseJsonBody, readBody } from './body.js';
import { answerPreflight, CorsPolicy, exposeTo, isPreflight, originNotAllowed } from './cors.js';
import { requestIdOf } from './request-id.js';
import { originFormOf } from './request-target.js';
import { sendError, sendJson, sendRaw, sendRouted, type HeaderMap } from './respond.js';
import { routedEndpoint, routeMethods } from './route-table.js';
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

/** Never rejects: a failure that is not a client error goes to `failed`. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
export type FailureHandler = (err: unknown, req: IncomingMessage, res: ServerResponse) => void;

/** Where the gateway's abort waits for the response's 'close' or the end of the shutdown grace (see http-server.ts). */
export const kAbort = Symbol('switchyard.abortOnClientGone');
export type RoutedResponse = ServerResponse & { [kAbort]?: (reason?: AttemptAborted) => void };

/** An answer sent before the body was read: the connection cannot be reused safely. */
const CLOSE: HeaderMap = { connection: 'close' };
const HEALTHZ = JSON.stringify({ status: 'ok' });
const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();
const DONE = Promise.resolve();
const SLASH = 0x2f;

export function createRoutes(gateway: Gateway, hooks: ServerHooks, isClosing: () => boolean, failed: FailureHandler, sendTimeoutMs = 0): Handler {
  const { config } = gateway;
  const auth = new Authenticator(config.keys);
  const maxBody = config.server.maxBodyBytes;
  const adminDigest = config.server.adminKey ? sha256(config.server.adminKey) : undefined;
  const cors = new CorsPolicy(config.server.cors.origins, config.server.host.toLowerCase());
  const loopbackOnly = isLoopbackHost(config.server.host);
  // The model list is fixed for a gateway's life; a key limited to some models sees only those.
  const allModels = gateway.models();
  const modelsJson = JSON.stringify(allModels);
  const modelsByKey = new Map<string, { list: string; byId: Map<string, string> }>();
  function modelsFor(key: KeyConfig | null): { list: string; byId: Map<string, string> } {
    const id = key?.models ? key.id : '';
    let m = modelsByKey.get(id);
    if (m === undefined) {
      const data = key?.models ? allModels.data.filter((d) => key.models!.includes(d.id)) : allModels.data;
      m = { list: id === '' ? modelsJson : JSON.stringify({ object: 'list', data }), byId: new Map(data.map((d) => [d.id, JSON.stringify(d)])) };
      modelsByKey.set(id, m);
    }
    return m;
  }

  /** Dispatch. The two routed endpoints are their own async functions: no second promise and hop for every chat request. */
  function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    // One test for the origin form every SDK sends; the absolute form only pays for its parse.
    const url = target.charCodeAt(0) === SLASH ? target : (originFormOf(target) ?? target);
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    // A browser's request (cors.ts): SDKs and servers send no Origin and pay this one lookup.
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const answered = fromBrowser(req, res, origin, path, method);
      if (answered !== undefined) return answered;
    }
    switch (path) {
      case '/v1/chat/completions':
      case '/chat/completions':
        return method === 'POST' ? chat(req, res) : refuse(methodNotAllowed('POST'), req, res);
      case '/v1/embeddings':
      case '/embeddings':
        return method === 'POST' ? embeddings(req, res) : refuse(methodNotAllowed('POST'), req, res);
    }
    return other(req, res, url, q, path, method);
  }

  /**
   * An origin not allowed is refused before routing and before its body is read; an
   * allowed one's preflight is answered here, and its request goes on with the CORS headers.
   */
  function fromBrowser(req: IncomingMessage, res: ServerResponse, origin: string, path: string, method: string): Promise<void> | undefined {
    const allowOrigin = cors.allow(origin, req.headers.host);
    if (allowOrigin === undefined) {
      const err = originNotAllowed(origin);
      // Counted as the body's refusals are: only a request the route would have taken.
      const endpoint = method === 'POST' ? routedEndpoint(path) : undefined;
      if (endpoint !== undefined) refusedAtTheDoor(err, endpoint, req, undefined);
      return refuse(err, req, res);
    }
    const methods = isPreflight(req) ? routeMethods(path) : undefined;
    if (methods !== undefined) {
      answerPreflight(req, res, allowOrigin, methods);
      return DONE;
    }
    exposeTo(res, allowOrigin);
    return undefined;
  }

  async function other(req: IncomingMessage, res: ServerResponse, url: string, q: number, path: string, method: string): Promise<void> {
    try {
      switch (path) {
        case '/v1/models':
        case '/models':
          onlyGet(method);
          return sendRaw(res, 200, modelsFor(auth.authenticate(req.headers)).list);
        case '/healthz':
          onlyGet(method);
          return sendRaw(res, 200, HEALTHZ);
        case '/readyz': {
          onlyGet(method);
          const r = hooks.readiness?.() ?? { ok: true };
          const closing = isClosing();
          return sendJson(res, closing || !r.ok ? 503 : 200, { status: closing ? 'shutting_down' : r.ok ? 'ready' : 'degraded', config: 'loaded', ...r });
        }
        case '/metrics': {
          onlyGet(method);
          admin(req);
          if (!hooks.metrics) throw notFound(path);
          const m = await hooks.metrics();
          return sendRaw(res, 200, m.body, undefined, m.contentType);
        }
        case '/traces':
          onlyGet(method);
          admin(req);
          if (!hooks.traces) throw notFound(path);
          return sendJson(res, 200, hooks.traces(new URLSearchParams(q === -1 ? '' : url.slice(q + 1))));
      }
      if (path.startsWith('/v1/models/') || path.startsWith('/models/')) {
        // The SDKs' models.retrieve(id); an id may hold a '/' (a pinned PROVIDER/MODEL is not listed, so not found).
        onlyGet(method);
        const models = modelsFor(auth.authenticate(req.headers));
        const id = decodePathSegment(path.slice(path.indexOf('/models/') + '/models/'.length));
        const model = models.byId.get(id);
        if (model === undefined) throw new GatewayError(404, 'model_not_found', `The model '${id.slice(0, 100)}' does not exist`, 'model');
        return sendRaw(res, 200, model);
      }
      if (path.startsWith('/traces/')) {
        onlyGet(method);
        admin(req);
        const t = hooks.trace?.(decodePathSegment(path.slice('/traces/'.length)));
        if (t === undefined) throw new GatewayError(404, 'not_found', 'No trace with that id');
        return sendJson(res, 200, t);
      }
      throw notFound(path);
    } catch (err) {
      answerError(err, req, res);
    }
  }

  /** A client error as the contract's error body; anything else goes to `failed`. Never throws. */
  function answerError(thrown: unknown, req: IncomingMessage, res: ServerResponse): void {
    // A deadline or the shutdown that ended the request outside the executor is still its answer (504, 503).
    const err = asAnswer(thrown);
    if (!(err instanceof GatewayError)) return failed(err, req, res);
    try {
      // Answered before the whole body arrived (401, 413, …): close rather than
      // leave the client and the parser to agree on where the next request starts,
      // lingering so that a client still uploading reads the answer, not a reset.
      // A request without a body is not complete yet either while its handler runs
      // (node marks it so after the 'request' event), but there is nothing to disagree
      // on: its connection stays open, as for any other answer.
      let extra: HeaderMap | undefined;
      if (!req.complete && hasBody(req)) {
        extra = CLOSE;
        lingerOnClose(req.socket);
      }
      const headers = err instanceof MethodNotAllowed ? { ...extra, allow: err.allow } : extra;
      sendError(res, err, requestIdOf(req.headers), headers);
    } catch (e) {
      failed(e, req, res);
    }
  }

  function refuse(err: GatewayError, req: IncomingMessage, res: ServerResponse): Promise<void> {
    answerError(err, req, res);
    return DONE;
  }

  function admin(req: IncomingMessage): void {
    if (!adminDigest) {
      // Open on a loopback-only gateway, but not to a web page that DNS rebinding pointed at it:
      // a same-origin GET carries no Origin, only the page's own name in Host.
      if (loopbackOnly && !cors.trustedHost(req.headers.host)) {
        throw new GatewayError(403, 'host_not_allowed', 'This endpoint answers only requests addressed to the gateway by an IP address, localhost or server.host (or set server.adminKey)');
      }
      return;
    }
    const presented = presentedKey(req.headers);
    // Compare digests: equal lengths, and no timing hint about the key's prefix.
    if (presented === undefined || !timingSafeEqual(sha256(presented), adminDigest)) {
      throw new GatewayError(401, 'invalid_api_key', 'This endpoint needs the admin key');
    }
  }

  /** A routed call's id and key, decided before the body is read (a bad key is a 401 without reading it). */
  function callOptions(req: IncomingMessage, res: ServerResponse): CallOptions {
    const idWords: number[] = [];
    const requestId = requestIdOf(req.headers, idWords);
    const key = auth.authenticate(req.headers);
    return { key, headers: req.headers, requestId, [ID_WORDS]: idWords.length === 4 ? idWords : undefined, [NODE_HEADERS]: true, onClientGone: whenClientLeaves(res) };
  }

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let opts: CallOptions | undefined;
    let routed = false;
    try {
      opts = callOptions(req, res);
      const body = parseJsonBody(await readBody(req, maxBody));
      // From here the gateway accounts for its own refusals.
      routed = true;
      const result = await gateway.chat(body, opts);
      if (result.stream) {
        await writeSse(res, result, result.meta, sendTimeoutMs);
        return;
      }
      sendRouted(res, result.raw ?? JSON.stringify(result.body), result.meta);
    } catch (err) {
      if (!routed) refusedAtTheDoor(err, 'chat', req, opts);
      answerError(err, req, res);
    }
  }

  async function embeddings(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let opts: CallOptions | undefined;
    let routed = false;
    try {
      opts = callOptions(req, res);
      const body = parseJsonBody(await readBody(req, maxBody));
      routed = true;
      const result = await gateway.embeddings(body, opts);
      sendRouted(res, result.raw ?? JSON.stringify(result.body), result.meta);
    } catch (err) {
      if (!routed) refusedAtTheDoor(err, 'embeddings', req, opts);
      answerError(err, req, res);
    }
  }

  /** A bad key, an oversized or unreadable body: counted and logged by the gateway. Never throws (a throwing listener must not stop the answer). */
  function refusedAtTheDoor(err: unknown, endpoint: 'chat' | 'embeddings', req: IncomingMessage, opts: CallOptions | undefined): void {
    try {
      gateway.refused(err, endpoint, { requestId: opts?.requestId ?? requestIdOf(req.headers), key: opts?.key });
    } catch (e) {
      hooks.onInternalError?.(e, opts?.requestId);
    }
  }

  return handle;
}

/** Registers the gateway's `abort`: the server calls it when the client goes away before the response is complete. */
const whenClientLeaves = (res: RoutedResponse) => (abort: (reason?: AttemptAborted) => void) => {
  res[kAbort] = abort;
};

/** RFC 9112 §6.3: a request has a body only when it declares one, by Transfer-Encoding or a Content-Length above 0. */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

function onlyGet(method: string): void {
  if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed('GET, HEAD');
}

function decodePathSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new GatewayError(400, 'invalid_request', 'Malformed percent-encoding in the path');
  }
}

class MethodNotAllowed extends GatewayError {
  constructor(readonly allow: string) {
    super(405, 'method_not_allowed', `Use ${allow} for this route`);
  }
}

const notFound = (path: string) => new GatewayError(404, 'not_found', `No route for ${path.slice(0, 100)}`);
const methodNotAllowed = (allow: string) => new MethodNotAllowed(allow);
