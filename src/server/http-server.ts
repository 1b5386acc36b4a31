/**
 * The node:http adapter over the gateway: the server, its timeouts, the last
 * line of defence for failures, and graceful shutdown. Nothing a client sends
 * may crash the process: every handler's failure ends in an error response (or
 * a closed socket when nobody is left to answer), never an unhandled rejection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Gateway } from '../core/gateway.js';
import { AttemptAborted, SHUTTING_DOWN } from '../resilience/abort.js';
import { awaitContinue, ClientGoneError, declaredOver } from './body.js';
import { answerMissingHost, isMissingHost, onClientError, onConnect, onUnmetExpectation } from './client-error.js';
import { requestIdOf } from './request-id.js';
import { internalError, sendError } from './respond.js';
import { createRoutes, kAbort, type RoutedResponse, type ServerHooks } from './routes.js';

export type { ServerHooks } from './routes.js';

/** node:http limits; the defaults suit production, tests shorten them. */
export interface ServerOptions {
  /** Headers and body must have arrived within this (a slow-body bound). Default 60 s. */
  requestTimeoutMs?: number;
  /** Headers must have arrived within this (a slowloris bound). Default 30 s, at most requestTimeoutMs. */
  headersTimeoutMs?: number;
  /** Idle keep-alive sockets close after this. Default 65 s (above common load balancers' 60 s). */
  keepAliveTimeoutMs?: number;
  /** How often node checks the two request timeouts. Default: half the headers timeout, at most 30 s. */
  timeoutCheckIntervalMs?: number;
  /**
   * A stream's client that takes nothing from its full socket for this long is gone
   * (nginx's send_timeout): its socket is closed and its upstream released. Default 60 s.
   */
  sendTimeoutMs?: number;
}

/** A connection and the response it is serving (http-server's own field). */
const kCurrent = Symbol('switchyard.currentResponse');
const kQueued = Symbol('switchyard.pipelinedResponses');
/**
 * A connection, the response it is serving, and (only when a client pipelines) the ones
 * whose requests arrived behind it: node answers them in order, all in flight at once.
 */
type TrackedSocket = Socket & { [kCurrent]?: RoutedResponse; [kQueued]?: RoutedResponse[] };

/** How long requests ended at the end of the shutdown grace have to write their answer. */
const FINAL_WRITE_MS = 1000;

export const SERVER_DEFAULTS = { requestTimeoutMs: 60_000, headersTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000, sendTimeoutMs: 60_000 } as const;

export interface SwitchyardServer {
  server: Server;
  listen(port: number, host: string): Promise<{ host: string; port: number; url: string }>;
  /** Stop accepting, let in-flight requests (streams too) finish up to `graceMs`, then close. */
  close(graceMs?: number): Promise<void>;
  readonly inFlight: number;
}

export function createSwitchyardServer(gateway: Gateway, hooks: ServerHooks = {}, options: ServerOptions = {}): SwitchyardServer {
  const { config } = gateway;
  let inFlight = 0;
  /**
   * Open connections, each with its response in flight (`kCurrent`), for the end of the
   * shutdown grace. Not a set of responses: one added and deleted per request cost ~30k
   * instructions a request in young-generation collections (BENCHMARKS.md); a connection
   * is added once, and a request only writes and clears one property on it.
   */
  const sockets = new Set<TrackedSocket>();
  let closing = false;
  let idle: (() => void) | undefined;
  const handle = createRoutes(gateway, hooks, () => closing, failed, options.sendTimeoutMs ?? SERVER_DEFAULTS.sendTimeoutMs);

  /** One listener per response, shared (no closure per request): in-flight count and client-gone abort. */
  function onResponseClose(this: RoutedResponse): void {
    inFlight--;
    // Cleared, or an idle keep-alive connection would hold its last request's objects.
    const socket = this.req.socket as TrackedSocket;
    const queued = socket[kQueued];
    if (socket[kCurrent] === this) socket[kCurrent] = queued?.shift();
    else if (queued !== undefined) {
      const i = queued.indexOf(this);
      if (i !== -1) queued.splice(i, 1);
    }
    if (!this.writableFinished) this[kAbort]?.();
    if (inFlight === 0) idle?.();
  }

  const requestTimeout = options.requestTimeoutMs ?? SERVER_DEFAULTS.requestTimeoutMs;
  // node refuses a headers timeout above the request timeout.
  const headersTimeout = Math.min(options.headersTimeoutMs ?? SERVER_DEFAULTS.headersTimeoutMs, requestTimeout);
  const server = createServer(
    {
      requestTimeout,
      headersTimeout,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? SERVER_DEFAULTS.keepAliveTimeoutMs,
      connectionsCheckingInterval: options.timeoutCheckIntervalMs ?? Math.min(30_000, Math.max(10, Math.floor(headersTimeout / 2))),
      // Checked in onRequest instead, to answer with the error JSON (client-error.ts).
      requireHostHeader: false,
    },
    onRequest,
  );
  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    if (isMissingHost(req)) return answerMissingHost(req, res);
    inFlight++;
    const socket = req.socket as TrackedSocket;
    if (socket[kCurrent] === undefined) socket[kCurrent] = res;
    else (socket[kQueued] ??= []).push(res); // pipelined behind a response still in flight
    res.on('close', onResponseClose);
    if (closing) res.setHeader('connection', 'close');
    void handle(req, res);
  }
  /**
   * `Expect: 100-continue`: node would write 100 Continue itself, and a client declaring a
   * body over the bound would upload all of it before reading the 413. Without the 100 the
   * route answers from the headers (413 from readBody, or a 401 first, as without Expect).
   * The client may then send the body or not: the connection closes after the answer
   * rather than leave the client and the parser to disagree on where the next request starts.
   * Within the bound, the 100 goes out when the route reads the body (awaitContinue).
   */
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (declaredOver(req, config.server.maxBodyBytes)) res.setHeader('connection', 'close');
    else awaitContinue(req, res);
    onRequest(req, res);
  });
  // Malformed HTTP (bad request line, oversized headers, lying bodies, timeouts).
  server.on('clientError', onClientError);
  // What node would answer by itself with no body (417) or a cut connection (CONNECT).
  server.on('checkExpectation', onUnmetExpectation);
  server.on('connect', onConnect);
  server.on('connection', (socket: TrackedSocket) => {
    sockets.add(socket);
    socket.once('close', onSocketClose);
  });

  /**
   * A connection closed. node emits 'close' on the response it was writing, but drops the
   * responses pipelined behind it without a word (node 20's socketOnClose destroys only
   * their requests). Each is closed here as the client left it: without this it stayed in
   * flight for good — the gateway went on working for nobody (its upstream call ran to
   * the end; a stream waited for a 'drain' that could never come) and every graceful
   * shutdown waited out its whole grace.
   */
  function onSocketClose(this: TrackedSocket): void {
    sockets.delete(this);
    const queued = this[kQueued];
    if (queued === undefined || queued.length === 0) return;
    // A copy: each response takes itself off the list as it closes.
    for (const res of queued.slice()) {
      res.destroy();
      res.emit('close');
    }
  }

  /** The last line: an error that was not a client error (or a client that left). */
  function failed(err: unknown, req: IncomingMessage, res: ServerResponse): void {
    try {
      if (err instanceof ClientGoneError || (err instanceof AttemptAborted && err.kind === 'client')) {
        // Nobody is left to answer, and it is not the gateway's fault.
        res.destroy();
        return;
      }
      const requestId = requestIdOf(req.headers);
      hooks.onInternalError?.(err, requestId);
      if (res.headersSent || res.destroyed) res.destroy();
      else sendError(res, internalError(), requestId, { connection: 'close' });
    } catch {
      // A throwing logger or a broken socket: still never an unhandled rejection.
      res.destroy();
    }
  }

  /** Resolves when nothing is in flight, or after `ms`. */
  function untilIdle(ms: number): Promise<void> {
    if (inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        idle = undefined;
        resolve();
      }, ms);
      idle = () => {
        idle = undefined;
        clearTimeout(t);
        resolve();
      };
    });
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
          // After start-up, an 'error' (EMFILE on accept under a connection flood)
          // without a listener would crash the process.
          server.on('error', (err) => {
            try {
              hooks.onInternalError?.(err);
            } catch {
              // nothing more to do
            }
          });
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
      await untilIdle(graceMs);
      // The grace ran out: each routed request still in flight ends with an answer, not a
      // cut connection — a buffered one with 503 shutting_down, a stream with a final error
      // event — written within FINAL_WRITE_MS. Requests still sending their body are cut.
      let ended = 0;
      const end = (res: RoutedResponse | undefined): void => {
        const abort = res?.[kAbort];
        if (abort === undefined) return;
        ended++;
        abort(SHUTTING_DOWN());
      };
      for (const socket of sockets) {
        end(socket[kCurrent]);
        // A copy: a response that closes takes itself off the list.
        for (const res of socket[kQueued]?.slice() ?? []) end(res);
      }
      if (ended > 0) await untilIdle(FINAL_WRITE_MS);
      server.closeAllConnections();
      await stopped;
    },
  };
}
