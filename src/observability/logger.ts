/**
 * The gateway's structured logger: pino, JSON lines, written through an
 * asynchronous destination so a log line never waits on stdout. Secrets are
 * redacted by key name at the top of a logged object and under the usual
 * parents (`headers.authorization`, `req.headers.x-api-key`, `provider.apiKey`…),
 * and nothing here ever logs a prompt or a completion.
 */
import type { EventEmitter } from 'node:events';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger } from 'pino';
export { createRequestLogger } from './request-logger.js';

export const DEFAULT_LOG_LEVEL = 'info';
const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Key names whose values are secrets. */
export const SECRET_KEYS = ['authorization', 'x-api-key', 'api-key', 'apiKey', 'key', 'adminKey'];

/**
 * Where secrets are looked for: the top of a logged object and these parents.
 * Explicit paths rather than wildcards (`*.key`): with @pinojs/redact a single
 * wildcard level made every line ~7x slower (≈45 µs instead of ≈6 µs). So
 * log headers under one of these names, and never log config objects whole.
 */
export const REDACT_PARENTS = ['headers', 'req.headers', 'request.headers', 'upstream.headers', 'err.headers', 'provider', 'server', 'config'];

export const REDACT_PATHS: string[] = SECRET_KEYS.flatMap((k) => {
  const seg = /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `["${k}"]`;
  return [k, ...REDACT_PARENTS.map((p) => p + seg)];
});

/**
 * The most log output that may wait for stdout. pino's asynchronous destination
 * (sonic-boom) buffers whatever stdout has not taken, without limit by default:
 * a log collector that stops reading the pipe (a stuck sidecar, a paused
 * `docker logs` reader) grew the gateway by every line it wrote — about
 * 400 bytes a request, gigabytes in an hour at a few hundred requests a second.
 * Past this, new lines are dropped until stdout drains. Normal traffic keeps a
 * few kilobytes waiting; 16 MiB covers seconds of stalls at thousands of
 * requests a second.
 */
export const MAX_LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * Lines each destination dropped, keyed by the destination (a logger's children
 * write to their parent's, so any of them finds the count). A plain number bumped
 * by sonic-boom's 'drop' event, which fires only for a dropped line: a line
 * written costs nothing here. Read at scrape time (switchyard_log_lines_dropped_total).
 */
const dropped = new WeakMap<object, { lines: number }>();

export interface CreateLoggerOptions {
  /** Default: `LOG_LEVEL`, else `info`. An unknown level falls back to `info`, with a warning line saying so. */
  level?: string;
  /** Default: stdout (or `fd`) through `pino.destination({ sync: false })`, bounded by MAX_LOG_BUFFER_BYTES. Tests pass a stream. */
  destination?: DestinationStream;
  /** The file descriptor of the default destination. Default 1 (stdout). */
  fd?: number;
  /** Extra fields on every line (e.g. a gateway name). */
  base?: Record<string, unknown>;
}

export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  const wanted = (opts.level ?? process.env.LOG_LEVEL ?? DEFAULT_LOG_LEVEL).toLowerCase();
  const options: LoggerOptions = {
    level: LEVELS.has(wanted) ? wanted : DEFAULT_LOG_LEVEL,
    base: { pid: process.pid, ...opts.base },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  // pino registers an exit hook that flushes an async destination if the process ends.
  const destination = opts.destination ?? pino.destination({ dest: opts.fd ?? 1, sync: false, maxLength: MAX_LOG_BUFFER_BYTES });
  countDrops(destination);
  const logger = pino(options, destination);
  if (!LEVELS.has(wanted)) {
    // A typo must not silently leave debug logging off (or info on); bounded, the value is the operator's.
    const given = opts.level === undefined ? 'LOG_LEVEL' : 'level';
    logger.warn({ event: 'config' }, `${given} '${wanted.slice(0, 40)}' is not a level (${[...LEVELS].join(', ')}): logging at ${DEFAULT_LOG_LEVEL}`);
  }
  return logger;
}

/** Count the lines a destination drops (sonic-boom's 'drop', past its maxLength); a plain stream never emits it. */
function countDrops(destination: DestinationStream): void {
  if (typeof (destination as { on?: unknown }).on !== 'function' || dropped.has(destination)) return;
  const count = { lines: 0 };
  dropped.set(destination, count);
  (destination as unknown as EventEmitter).on('drop', () => {
    count.lines++;
  });
}

const destinationOf = (logger: Logger) => (logger as unknown as Record<symbol, DestinationStream | undefined>)[pino.symbols.streamSym];

/**
 * Count, from now on, the lines a logger made elsewhere drops (an embedder's own, passed to
 * the gateway): createLogger's are counted from their first line. Once per destination.
 */
export function countDroppedLines(logger: Logger): void {
  const destination = destinationOf(logger);
  if (destination !== undefined) countDrops(destination);
}

/** Lines this logger's destination dropped because its buffer was full (0 for one that never drops). */
export function droppedLogLines(logger: Logger): number {
  const destination = destinationOf(logger);
  return destination === undefined ? 0 : (dropped.get(destination)?.lines ?? 0);
}

/** A logger that writes nothing (tests, embedding without logs). */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Write out anything buffered in the logger's destination. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      // A destination without flush support (a plain stream) has nothing buffered here.
      resolve();
    }
  });
}
