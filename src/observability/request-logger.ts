/**
 * One log line per finished request (and per request refused before routing:
 * a bad key, an unreadable body), plus lines for breaker, cooldown and
 * state-backend changes. The `request` listener only queues the record; lines
 * are written on the next turn of the event loop, so serialising JSON never
 * happens inside a request's own work. Only routing facts are logged: the
 * TraceRecord carries no prompt, completion or secret, and no free text
 * (attempt messages) is copied from it.
 */
import type { Logger } from 'pino';
import { upstreamAttempts, type EventBus, type RefusedEvent, type TraceRecord } from './events.js';

const MAX_MODEL_CHARS = 200;

export interface RequestLogger {
  /** Write queued lines now and stop listening. */
  close(): void;
}

export function createRequestLogger(bus: EventBus, logger: Logger): RequestLogger {
  let queue: TraceRecord[] = [];
  let refusals: RefusedEvent[] = [];
  let scheduled: NodeJS.Immediate | undefined;

  const drain = (): void => {
    scheduled = undefined;
    const batch = queue;
    queue = [];
    for (const t of batch) writeRequest(logger, t);
    const refused = refusals;
    refusals = [];
    for (const r of refused) writeRefusal(logger, r);
  };

  const unsubscribe = [
    bus.on('request', (t) => {
      if (!logger.isLevelEnabled(t.status >= 500 ? 'warn' : 'info')) return;
      queue.push(t);
      scheduled ??= setImmediate(drain);
    }),
    bus.on('refused', (r) => {
      if (!logger.isLevelEnabled(refusalLevel(r))) return;
      refusals.push(r);
      scheduled ??= setImmediate(drain);
    }),
    bus.on('breaker', (ev) => {
      const level = ev.to === 'open' ? 'warn' : 'info';
      logger[level]({ event: 'breaker', deployment: ev.deployment, from: ev.from, to: ev.to }, `circuit ${ev.to} for ${ev.deployment}`);
    }),
    bus.on('cooldown', (ev) => {
      logger.info(
        { event: 'cooldown', deployment: ev.deployment, reason: ev.reason, until: new Date(ev.untilMs).toISOString() },
        `cooldown for ${ev.deployment}`,
      );
    }),
    bus.on('state', (ev) => {
      const fields = { event: 'state', backend: ev.backend, healthy: ev.healthy, detail: ev.message };
      if (ev.healthy) logger.info(fields, `state backend ${ev.backend} healthy`);
      else logger.warn(fields, `state backend ${ev.backend} degraded`);
    }),
    bus.on('throttle', (ev) => {
      if (ev.outcome === 'acquired' || !logger.isLevelEnabled('debug')) return;
      logger.debug({ event: 'throttle', deployment: ev.deployment, outcome: ev.outcome, waitedMs: ev.waitedMs }, 'throttled');
    }),
  ];

  return {
    close() {
      unsubscribe.forEach((off) => off());
      if (scheduled !== undefined) clearImmediate(scheduled);
      drain();
    },
  };
}

/** Client-chosen text: bounded so a silly request cannot make a huge line. */
const bounded = (model: string): string => (model.length > MAX_MODEL_CHARS ? `${model.slice(0, MAX_MODEL_CHARS)}…` : model);

/**
 * A missing or wrong key is logged at debug: a client without a key must not decide how
 * much the gateway logs (switchyard_requests_total counts them at every level).
 */
const refusalLevel = (r: RefusedEvent): 'debug' | 'info' => (r.status === 401 ? 'debug' : 'info');

function writeRefusal(logger: Logger, r: RefusedEvent): void {
  logger[refusalLevel(r)](
    { event: 'request', id: r.requestId, keyId: r.keyId, endpoint: r.endpoint, model: r.model === null ? null : bounded(r.model), status: r.status, errorCode: r.errorCode },
    'request refused',
  );
}

function writeRequest(logger: Logger, t: TraceRecord): void {
  const fields = {
    event: 'request',
    id: t.id,
    keyId: t.keyId,
    endpoint: t.endpoint,
    model: bounded(t.model),
    deployment: t.deployment,
    selection: t.selection,
    status: t.status,
    // As x-switchyard-attempts: calls made, not the candidates passed over.
    attempts: upstreamAttempts(t.attempts),
    fallbackUsed: t.fallbackUsed,
    stream: t.stream,
    streamOutcome: t.streamOutcome,
    durationMs: t.durationMs,
    overheadMs: t.overheadMs,
    errorCode: t.errorCode,
  };
  if (t.status >= 500) logger.warn(fields, 'request failed');
  else logger.info(fields, 'request');
}
