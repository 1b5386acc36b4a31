/**
 * Everything `switchyard serve` runs, as one call: gateway, observability
 * (traces, metrics, logs) and the HTTP server, wired together. Tests and
 * embedders use it to get a real listening gateway from a Config.
 */
import type { Config } from '../config/types.js';
import { configWarnings } from '../config/warnings.js';
import { createObservability, type Observability, type ObservabilityOptions } from '../observability/create-observability.js';
import { EventBus } from '../observability/events.js';
import { isFilterError, parseTraceFilter } from '../observability/traces-api.js';
import { createSwitchyardServer, type ServerOptions, type SwitchyardServer } from '../server/http-server.js';
import { createGateway, type Gateway, type GatewayOptions } from './gateway.js';
import { invalidRequest } from './errors.js';

export interface StartOptions extends GatewayOptions {
  port?: number;
  host?: string;
  observability?: ObservabilityOptions;
  /** HTTP-level timeouts (slow clients); defaults suit production. */
  server?: ServerOptions;
}

export interface RunningSwitchyard {
  gateway: Gateway;
  observability: Observability;
  server: SwitchyardServer;
  /** Where to reach it: the bound address (`http://127.0.0.1:PORT` for `localhost`). */
  url: string;
  host: string;
  port: number;
  /**
   * The ready line's `http://HOST:PORT`: the host as configured (`localhost`, `0.0.0.0`,
   * `[::]`) with the bound port, so it reads as the config a user wrote (CONTRACT.md).
   */
  listenUrl: string;
  /** Graceful: stop accepting, let in-flight requests finish up to `graceMs`, then release everything. */
  close(graceMs?: number): Promise<void>;
}

export async function startSwitchyard(config: Config, opts: StartOptions = {}): Promise<RunningSwitchyard> {
  const bus = opts.bus ?? new EventBus();
  const observability = createObservability(bus, config, { clock: opts.clock, ...opts.observability });
  const gateway = createGateway(config, { ...opts, bus });
  const { logger, traces, metrics } = observability;
  for (const w of configWarnings(config)) logger.warn({ event: 'config' }, w);
  if (config.state.backend === 'redis') {
    // Accepted by the schema so configs written for the shared-state feature load, but not built yet: say so.
    logger.warn({ event: 'state', backend: 'redis' }, 'state.backend redis is not implemented yet: breakers, cooldowns and limits are kept in this process');
  }
  const server = createSwitchyardServer(gateway, {
    traces(params) {
      const f = parseTraceFilter(params);
      if (isFilterError(f)) throw invalidRequest(f.error, f.param);
      return { object: 'list', data: traces.query(f) };
    },
    trace: (id) => traces.get(id),
    metrics: async () => {
      gateway.health.settle(); // an idle open circuit that would let a probe through reads half-open
      return { contentType: metrics.contentType, body: await metrics.render() };
    },
    readiness: () => ({ ok: true, state: 'memory' }),
    onInternalError: (err, requestId) =>
      logger.error({ event: 'internal_error', requestId, err: err instanceof Error ? err.message : String(err) }, 'internal error'),
  }, opts.server);
  const port = opts.port ?? config.server.port;
  const host = opts.host ?? config.server.host;
  let addr: Awaited<ReturnType<SwitchyardServer['listen']>>;
  try {
    addr = await server.listen(port, host);
  } catch (err) {
    // Nothing listens: release what was built (pools, trace store, timers) for an embedder that carries on.
    await Promise.allSettled([gateway.close(), observability.close()]);
    throw listenError(err, host, port);
  }
  let closed: Promise<void> | undefined;
  return {
    gateway,
    observability,
    server,
    ...addr,
    listenUrl: `http://${urlHost(host)}:${addr.port}`,
    close(graceMs) {
      closed ??= (async () => {
        await server.close(graceMs);
        await gateway.close();
        await observability.close();
      })();
      return closed;
    },
  };
}

/** Why `host:port` cannot be listened on, in the config's words: node's says `getaddrinfo ENOTFOUND x`. */
function listenError(err: unknown, host: string, port: number): Error {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const at = `${urlHost(host)}:${port}`;
  const why =
    code === 'EADDRINUSE' ? ['server.port', 'the port is already in use']
    : code === 'EACCES' ? ['server.port', 'permission denied (ports below 1024 need privileges)']
    : code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' ? ['server.host', 'the host name does not resolve']
    : code === 'EADDRNOTAVAIL' ? ['server.host', 'no network interface of this machine has that address']
    : undefined;
  const message = why ? `${why[0]}: cannot listen on ${at}: ${why[1]}` : `cannot listen on ${at}: ${err instanceof Error ? err.message : String(err)}`;
  return new Error(message, { cause: err });
}

/** An IPv6 literal in brackets, as a URL writes it. */
const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host);
