/**
 * Prometheus metrics from gateway events. Each gateway gets its own Registry
 * (never prom-client's global one): several gateways may share a process.
 * Listeners only bump cached series — a field update each (fast-instruments.ts),
 * no I/O, no label hashing; text is rendered on scrape.
 * Every label value is bounded (metric-labels.ts), whatever clients send.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from '../config/types.js';
import { PASSED_OVER, type EventBus, type TraceRecord } from './events.js';
import { cache1, cache2, cache3 } from './child-cache.js';
import { FastCounter, FastHistogram } from './fast-instruments.js';
import { MetricLabels, OTHER } from './metric-labels.js';

export const PREFIX = 'switchyard_';
/** Whole requests and upstream attempts: LLM calls run from tens of ms to minutes. */
export const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120];
export const TTFT_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20];
/** The gateway's own time per request: should sit well under a millisecond. */
export const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];
export const THROTTLE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];

const BACKENDS = new Set(['memory', 'redis']);
const CIRCUIT_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

export interface Metrics {
  registry: Registry;
  render(): Promise<string>;
  contentType: string;
  /** Unsubscribe from the bus (the registry keeps its values). */
  stop(): void;
}

export interface MetricsOptions {
  /** Also export prom-client's process/runtime metrics (prefixed). Off by default: they install runtime observers. */
  processMetrics?: boolean;
  /** Log lines dropped so far because the log destination was backed up (logger.ts droppedLogLines); read on scrape. */
  logLinesDropped?: () => number;
}

export function createMetrics(bus: EventBus, config: Config, opts: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  const labels = new MetricLabels(config);
  const registers = [registry];
  const counter = (name: string, help: string, labelNames: string[]) => new FastCounter(PREFIX + name, help, labelNames, registry);
  const histogram = (name: string, help: string, labelNames: string[], buckets: number[]) =>
    new FastHistogram(PREFIX + name, help, labelNames, buckets, registry);

  const requests = counter('requests_total', 'Requests answered, by model label, endpoint and HTTP status code.', ['model', 'endpoint', 'code']);
  const duration = histogram('request_duration_seconds', 'Whole-request duration, every attempt included.', ['model', 'endpoint'], DURATION_BUCKETS);
  const ttft = histogram('ttft_seconds', 'Streams: time from request start to the first content token sent to the client.', ['model'], TTFT_BUCKETS);
  const overhead = histogram('overhead_seconds', 'Time spent in the gateway itself per request, upstream time excluded.', [], OVERHEAD_BUCKETS).labels();
  const attempts = counter('upstream_attempts_total', 'Upstream attempts (and candidates skipped without a call), by outcome.', ['deployment', 'outcome']);
  const attemptDuration = histogram('upstream_attempt_duration_seconds', 'Duration of upstream calls.', ['deployment'], DURATION_BUCKETS);
  const fallbacks = counter('fallbacks_total', 'Requests served from a fallback alias, by the error category of their first attempt (no_candidate: the alias had none for the request).', ['model', 'reason']);
  const retries = counter('retries_total', 'Attempts repeated on the same deployment.', ['deployment']);
  const circuit = new Gauge<'deployment'>({ name: PREFIX + 'circuit_state', help: 'Circuit breaker state: 0 closed, 1 half-open, 2 open.', labelNames: ['deployment'], registers });
  const cooldowns = counter('cooldowns_total', 'Deployments put in cooldown, by reason.', ['deployment', 'reason']);
  const throttles = counter('throttle_waits_total', 'Waits for local rpm/tpm capacity, by outcome.', ['deployment', 'outcome']);
  const throttleWait = histogram('throttle_wait_seconds', 'Time spent waiting for local capacity.', ['deployment'], THROTTLE_BUCKETS);
  const tokens = counter('tokens_total', 'Tokens of successful attempts: in (prompt) and out (completion).', ['deployment', 'direction']);
  const cost = counter('cost_usd_total', 'Estimated spend in USD from configured prices.', ['deployment']);
  const streamOutcomes = counter('stream_outcomes_total', 'How streamed requests ended.', ['outcome']);
  const malformed = counter('malformed_events_total', 'Malformed upstream stream events skipped.', ['deployment']);
  const stateHealthy = new Gauge<'backend'>({ name: PREFIX + 'state_backend_healthy', help: 'State backend health: 1 healthy, 0 degraded.', labelNames: ['backend'], registers });

  const readDropped = opts.logLinesDropped ?? (() => 0);
  new Counter({
    name: PREFIX + 'log_lines_dropped_total',
    help: 'Log lines dropped because the log destination (stdout) was not taking them and its buffer was full.',
    registers,
    // The logger keeps the count (a number bumped only for a dropped line); the series is set from it on scrape.
    collect() {
      this.reset();
      this.inc(readDropped());
    },
  });

  if (opts.processMetrics) collectDefaultMetrics({ register: registry, prefix: PREFIX });

  const requestsC = cache3((m: string, e: string, code: number) => requests.labels(m, e, codeLabel(code)));
  const durationC = cache2((m: string, e: string) => duration.labels(m, e));
  const ttftC = cache1((m: string) => ttft.labels(m));
  const attemptsC = cache2((d: string, o: string) => attempts.labels(d, o));
  const attemptDurationC = cache1((d: string) => attemptDuration.labels(d));
  const fallbacksC = cache2((m: string, r: string) => fallbacks.labels(m, r));
  const retriesC = cache1((d: string) => retries.labels(d));
  const circuitC = cache1((d: string) => circuit.labels(d));
  const cooldownsC = cache2((d: string, r: string) => cooldowns.labels(d, r));
  const throttlesC = cache2((d: string, o: string) => throttles.labels(d, o));
  const throttleWaitC = cache1((d: string) => throttleWait.labels(d));
  const tokensInC = cache1((d: string) => tokens.labels(d, 'in'));
  const tokensOutC = cache1((d: string) => tokens.labels(d, 'out'));
  const costC = cache1((d: string) => cost.labels(d));
  const streamC = cache1((o: string) => streamOutcomes.labels(o));
  const malformedC = cache1((d: string) => malformed.labels(d));

  // Series for configured deployments exist from the start, so rate() and
  // "is it open?" queries work before the first event.
  for (const d of labels.configuredDeployments()) {
    circuitC(d).set(0);
    tokensInC(d).inc(0);
    tokensOutC(d).inc(0);
    costC(d).inc(0);
  }

  const onRequest = (t: TraceRecord): void => {
    const model = labels.model(t.model);
    requestsC(model, t.endpoint, t.status).inc();
    if (validMs(t.durationMs)) durationC(model, t.endpoint).observe(t.durationMs / 1000);
    if (t.ttftMs !== null && validMs(t.ttftMs)) ttftC(model).observe(t.ttftMs / 1000);
    if (validMs(t.overheadMs)) overhead.observe(t.overheadMs / 1000);
    if (t.streamOutcome !== null) streamC(t.streamOutcome).inc();
    // A first attempt without an error was the fallback's own: the alias had no candidate for the request.
    if (t.fallbackUsed) fallbacksC(model, t.attempts[0]?.errorType ?? 'no_candidate').inc();

    const a = t.attempts;
    for (let i = 1; i < a.length; i++) {
      // Two calls in a row: a call after its own deployment was passed over (throttled, then served
      // once the wait for capacity ended) is that deployment's first, not a repeat.
      if (
        a[i]!.provider === a[i - 1]!.provider &&
        a[i]!.model === a[i - 1]!.model &&
        !PASSED_OVER.has(a[i - 1]!.errorType) &&
        !PASSED_OVER.has(a[i]!.errorType)
      ) {
        retriesC(labels.deploymentOf(a[i]!.provider, a[i]!.model)).inc();
      }
    }

    // A stream's tokens and cost were credited attempt by attempt (attemptUsage): a resumed one's
    // attempts may have run on other deployments than the one that finished it.
    if (t.deployment !== null && !t.stream) spent(t.deployment, t.usage.promptTokens, t.usage.completionTokens, t.costUsd);
    if (t.malformedEvents > 0) malformedC(labels.deployment(t.deployment)).inc(t.malformedEvents);
  };

  /** Tokens and cost credited to a deployment: a buffered request's, or one stream attempt's. */
  function spent(deployment: string, promptTokens: number, completionTokens: number, costUsd: number | null): void {
    const d = labels.deployment(deployment);
    addCount(tokensInC(d), promptTokens);
    addCount(tokensOutC(d), completionTokens);
    if (costUsd !== null) addCount(costC(d), costUsd);
  }

  /** Per shared label, the state of each breaker behind it (bounded: Catalog gives pins at most 33 states a provider). */
  const shared = new Map<string, Map<string, number>>();

  const unsubscribe = [
    bus.on('request', onRequest),
    // Refused before routing: counted with the others, no duration (it says nothing of routing) — see RefusedEvent.
    bus.on('refused', (ev) => requestsC(labels.model(ev.model ?? ''), ev.endpoint, ev.status).inc()),
    bus.on('attempt', (ev) => {
      const d = labels.deployment(ev.deployment);
      const outcome = ev.trace.errorType ?? 'success';
      attemptsC(d, outcome).inc();
      if (!PASSED_OVER.has(ev.trace.errorType) && validMs(ev.trace.latencyMs)) attemptDurationC(d).observe(ev.trace.latencyMs / 1000);
    }),
    bus.on('attemptUsage', (ev) => spent(ev.deployment, ev.usage.promptTokens, ev.usage.completionTokens, ev.usage.costUsd)),
    bus.on('breaker', (ev) => {
      const label = labels.deployment(ev.deployment);
      const value = CIRCUIT_VALUE[ev.to];
      if (label === ev.deployment) return circuitC(label).set(value);
      // Several breakers behind one label (pinned models, `PROVIDER/other`): the series shows
      // the worst of them, so an open one is never hidden by another that closed.
      let states = shared.get(label);
      if (states === undefined) shared.set(label, (states = new Map()));
      states.set(ev.deployment, value);
      let worst = 0;
      for (const v of states.values()) worst = Math.max(worst, v);
      circuitC(label).set(worst);
    }),
    bus.on('cooldown', (ev) => cooldownsC(labels.deployment(ev.deployment), ev.reason).inc()),
    bus.on('throttle', (ev) => {
      const d = labels.deployment(ev.deployment);
      throttlesC(d, ev.outcome).inc();
      // Only requests that waited: a skip, or an answer at once (beyond_budget, overflow), waited for nothing.
      if ((ev.outcome === 'acquired' || ev.outcome === 'timed_out') && validMs(ev.waitedMs)) throttleWaitC(d).observe(ev.waitedMs / 1000);
    }),
    bus.on('state', (ev) => stateHealthy.labels(BACKENDS.has(ev.backend) ? ev.backend : OTHER).set(ev.healthy ? 1 : 0)),
  ];

  return {
    registry,
    render: () => registry.metrics(),
    contentType: registry.contentType,
    stop: () => unsubscribe.forEach((off) => off()),
  };
}

const CODE_LABELS: string[] = [];
for (let c = 100; c <= 599; c++) CODE_LABELS[c] = String(c);

function codeLabel(status: number): string {
  return CODE_LABELS[status] ?? OTHER;
}

/** A timing worth observing: a bad value from upstream must not create a series or skew a sum. */
function validMs(ms: number): boolean {
  return Number.isFinite(ms) && ms >= 0;
}

function addCount(c: { inc(v: number): void }, n: number): void {
  if (Number.isFinite(n) && n > 0) c.inc(n);
}
