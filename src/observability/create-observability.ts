/**
 * Wires traces, metrics and logs to one gateway's EventBus. The composition
 * root (core/) calls this once per gateway and serves `traces` and `metrics`
 * from the admin routes; `close()` unsubscribes, flushes the trace store and,
 * when it created the logger, the log destination.
 */
import type { Clock } from '../core/clock.js';
import type { Config } from '../config/types.js';
import type { EventBus } from './events.js';
import { countDroppedLines, createLogger, droppedLogLines, flushLogger, type Logger } from './logger.js';
import { MemoryTraceStore } from './memory-trace-store.js';
import { createMetrics, type Metrics } from './metrics.js';
import { createRequestLogger } from './request-logger.js';
import { SqliteTraceStore } from './sqlite-trace-store.js';
import type { TraceStore } from './trace-store.js';

export interface ObservabilityOptions {
  /** Default: a new JSON logger on stdout (flushed by `close`). */
  logger?: Logger;
  /** For the SQLite store's flush timer and age retention. */
  clock?: Clock;
  /** Export process/runtime metrics too (see MetricsOptions). */
  processMetrics?: boolean;
}

export interface Observability {
  traces: TraceStore;
  metrics: Metrics;
  logger: Logger;
  close(): Promise<void>;
}

export function createObservability(bus: EventBus, config: Config, opts: ObservabilityOptions = {}): Observability {
  const ownLogger = opts.logger === undefined;
  const logger = opts.logger ?? createLogger();
  // An embedder's logger may drop lines too (a pino.destination with maxLength): counted from here
  // (createLogger's from its first line; a destination is counted once).
  countDroppedLines(logger);
  const traces = createTraceStore(config, logger, opts.clock);
  const metrics = createMetrics(bus, config, { processMetrics: opts.processMetrics, logLinesDropped: () => droppedLogLines(logger) });
  const requestLogger = createRequestLogger(bus, logger);
  // Both stores' add is O(1) and buffered: safe to call inside the emit.
  const offTraces = bus.on('request', (t) => traces.add(t));

  let closing: Promise<void> | undefined;
  return {
    traces,
    metrics,
    logger,
    close() {
      closing ??= (async () => {
        offTraces();
        metrics.stop();
        requestLogger.close();
        await traces.close();
        if (ownLogger) await flushLogger(logger);
      })();
      return closing;
    },
  };
}

function createTraceStore(config: Config, logger: Logger, clock: Clock | undefined): TraceStore {
  const { store, capacity, path, maxAgeMs } = config.traces;
  if (store === 'memory') return new MemoryTraceStore(capacity);
  try {
    return new SqliteTraceStore({
      path,
      capacity,
      maxAgeMs,
      clock,
      onError: (err) => logger.error({ event: 'traces', err: errorMessage(err) }, 'trace store write failed; batch dropped'),
    });
  } catch (err) {
    // SQLite's own words ("unable to open database file") name neither the file nor the setting.
    throw new Error(`traces.path: cannot open the trace database ${path}: ${errorMessage(err)}`, { cause: err });
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
