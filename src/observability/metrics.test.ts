import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { attempt, testConfig, trace } from '../../test/helpers/observability-fixtures.js';
import { parsePrometheusText, sampleValue, samplesNamed, type Exposition } from '../../test/helpers/prom-parse.js';
import { EventBus } from './events.js';
import { createMetrics } from './metrics.js';

const config = testConfig();
const setup = () => {
  const bus = new EventBus();
  const metrics = createMetrics(bus, config);
  const scrape = async (): Promise<Exposition> => parsePrometheusText(await metrics.render());
  return { bus, metrics, scrape };
};
const v = sampleValue;

describe('createMetrics', () => {
  it('exposes valid Prometheus text, every name prefixed, with the registry content type', async () => {
    const { metrics, scrape } = setup();
    const exp = await scrape();
    expect(exp.size).toBeGreaterThan(10);
    for (const name of exp.keys()) expect(name).toMatch(/^switchyard_/);
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('initialises circuit state and token/cost series for configured deployments', async () => {
    const exp = await setup().scrape();
    for (const d of ['openai/gpt-4o-mini', 'anthropic/claude-haiku', 'local/llama3']) {
      expect(v(exp, 'switchyard_circuit_state', { deployment: d })).toBe(0);
      expect(v(exp, 'switchyard_tokens_total', { deployment: d, direction: 'in' })).toBe(0);
      expect(v(exp, 'switchyard_cost_usd_total', { deployment: d })).toBe(0);
    }
  });

  it("counts requests, durations, ttft, overhead, tokens, cost and stream outcomes from request events (a stream's tokens from its attempts)", async () => {
    const { bus, scrape } = setup();
    bus.emit('request', trace({ durationMs: 300, overheadMs: 0.3, usage: { promptTokens: 100, completionTokens: 40 }, costUsd: 0.001 }));
    bus.emit('attemptUsage', { requestId: 'req-1', deployment: 'openai/gpt-4o-mini', usage: { promptTokens: 10, completionTokens: 5, costUsd: 0.0005 } });
    bus.emit('request', trace({ durationMs: 1500, overheadMs: 2, stream: true, ttftMs: 250, streamOutcome: 'completed', usage: { promptTokens: 10, completionTokens: 5 }, costUsd: 0.0005 }));
    bus.emit('request', trace({ model: 'smart', status: 503, deployment: null, routedProvider: null, routedModel: null, errorCode: 'all_candidates_unavailable', costUsd: null }));
    bus.emit('request', trace({ endpoint: 'embeddings', usage: { promptTokens: 7, completionTokens: 0 } }));
    const exp = await scrape();

    expect(v(exp, 'switchyard_requests_total', { model: 'fast', endpoint: 'chat', code: '200' })).toBe(2);
    expect(v(exp, 'switchyard_requests_total', { model: 'smart', endpoint: 'chat', code: '503' })).toBe(1);
    expect(v(exp, 'switchyard_requests_total', { model: 'fast', endpoint: 'embeddings', code: '200' })).toBe(1);

    expect(v(exp, 'switchyard_request_duration_seconds_count', { model: 'fast', endpoint: 'chat' })).toBe(2);
    expect(v(exp, 'switchyard_request_duration_seconds_sum', { model: 'fast', endpoint: 'chat' })).toBeCloseTo(1.8);
    expect(v(exp, 'switchyard_request_duration_seconds_bucket', { model: 'fast', endpoint: 'chat', le: '0.5' })).toBe(1);
    expect(v(exp, 'switchyard_request_duration_seconds_bucket', { model: 'fast', endpoint: 'chat', le: '2' })).toBe(2);

    expect(v(exp, 'switchyard_ttft_seconds_count', { model: 'fast' })).toBe(1);
    expect(v(exp, 'switchyard_ttft_seconds_sum', { model: 'fast' })).toBeCloseTo(0.25);
    expect(v(exp, 'switchyard_overhead_seconds_count')).toBe(4);
    expect(v(exp, 'switchyard_overhead_seconds_bucket', { le: '0.0005' })).toBe(3); // 0.3 ms and the fixtures' 0.4 ms twice; 2 ms is above
    expect(v(exp, 'switchyard_stream_outcomes_total', { outcome: 'completed' })).toBe(1);

    expect(v(exp, 'switchyard_tokens_total', { deployment: 'openai/gpt-4o-mini', direction: 'in' })).toBe(117);
    expect(v(exp, 'switchyard_tokens_total', { deployment: 'openai/gpt-4o-mini', direction: 'out' })).toBe(45);
    expect(v(exp, 'switchyard_cost_usd_total', { deployment: 'openai/gpt-4o-mini' })).toBeCloseTo(0.0015 + 0.0000045);
  });

  it('counts attempts by outcome, fallbacks by first failure, and same-deployment retries', async () => {
    const { bus, scrape } = setup();
    const attempts = [
      attempt({ status: 503, errorType: 'server', latencyMs: 40 }),
      attempt({ status: 503, errorType: 'server', latencyMs: 40 }),
      attempt({ provider: 'anthropic', model: 'claude-haiku', status: 200, latencyMs: 900 }),
    ];
    for (const a of attempts) {
      bus.emit('attempt', { requestId: 'r1', alias: 'fast', deployment: `${a.provider}/${a.model}`, trace: a, fallback: false });
    }
    bus.emit('attempt', { requestId: 'r2', alias: 'fast', deployment: 'openai/gpt-4o-mini', trace: attempt({ status: 0, errorType: 'circuit_open', latencyMs: 0 }), fallback: false });
    bus.emit('request', trace({ fallbackUsed: true, retryCount: 2, attempts, deployment: 'anthropic/claude-haiku', routedProvider: 'anthropic', routedModel: 'claude-haiku' }));
    const exp = await scrape();

    expect(v(exp, 'switchyard_upstream_attempts_total', { deployment: 'openai/gpt-4o-mini', outcome: 'server' })).toBe(2);
    expect(v(exp, 'switchyard_upstream_attempts_total', { deployment: 'openai/gpt-4o-mini', outcome: 'circuit_open' })).toBe(1);
    expect(v(exp, 'switchyard_upstream_attempts_total', { deployment: 'anthropic/claude-haiku', outcome: 'success' })).toBe(1);
    // Skipped candidates made no call: no latency observed for them.
    expect(v(exp, 'switchyard_upstream_attempt_duration_seconds_count', { deployment: 'openai/gpt-4o-mini' })).toBe(2);
    expect(v(exp, 'switchyard_fallbacks_total', { model: 'fast', reason: 'server' })).toBe(1);
    // Straight to the fallback (the alias had no deployment with what the request needs).
    bus.emit('request', trace({ fallbackUsed: true, attempts: [attempt({ provider: 'anthropic', model: 'claude-haiku', status: 200 })] }));
    expect(v(await scrape(), 'switchyard_fallbacks_total', { model: 'fast', reason: 'no_candidate' })).toBe(1);
    expect(v(exp, 'switchyard_retries_total', { deployment: 'openai/gpt-4o-mini' })).toBe(1);
    expect(v(exp, 'switchyard_retries_total', { deployment: 'anthropic/claude-haiku' })).toBeUndefined();
  });

  it('tracks breaker state, cooldowns, throttling, malformed events and state-backend health', async () => {
    const { bus, scrape } = setup();
    bus.emit('breaker', { deployment: 'openai/gpt-4o-mini', from: 'closed', to: 'open', at: 0 });
    bus.emit('breaker', { deployment: 'anthropic/claude-haiku', from: 'open', to: 'half_open', at: 0 });
    bus.emit('cooldown', { deployment: 'local/llama3', untilMs: 1, reason: 'rate_limited' });
    bus.emit('throttle', { deployment: 'local/llama3', waitedMs: 300, outcome: 'acquired' });
    bus.emit('throttle', { deployment: 'local/llama3', waitedMs: 2000, outcome: 'timed_out' });
    bus.emit('request', trace({ stream: true, malformedEvents: 3, streamOutcome: 'broken' }));
    bus.emit('state', { backend: 'redis', healthy: false, message: 'connection refused' });
    let exp = await scrape();

    expect(v(exp, 'switchyard_circuit_state', { deployment: 'openai/gpt-4o-mini' })).toBe(2);
    expect(v(exp, 'switchyard_circuit_state', { deployment: 'anthropic/claude-haiku' })).toBe(1);
    expect(v(exp, 'switchyard_circuit_state', { deployment: 'local/llama3' })).toBe(0);
    expect(v(exp, 'switchyard_cooldowns_total', { deployment: 'local/llama3', reason: 'rate_limited' })).toBe(1);
    expect(v(exp, 'switchyard_throttle_waits_total', { deployment: 'local/llama3', outcome: 'acquired' })).toBe(1);
    expect(v(exp, 'switchyard_throttle_waits_total', { deployment: 'local/llama3', outcome: 'timed_out' })).toBe(1);
    expect(v(exp, 'switchyard_throttle_wait_seconds_sum', { deployment: 'local/llama3' })).toBeCloseTo(2.3);
    expect(v(exp, 'switchyard_malformed_events_total', { deployment: 'openai/gpt-4o-mini' })).toBe(3);
    expect(v(exp, 'switchyard_stream_outcomes_total', { outcome: 'broken' })).toBe(1);
    expect(v(exp, 'switchyard_state_backend_healthy', { backend: 'redis' })).toBe(0);

    bus.emit('breaker', { deployment: 'openai/gpt-4o-mini', from: 'half_open', to: 'closed', at: 1 });
    bus.emit('state', { backend: 'redis', healthy: true });
    exp = await scrape();
    expect(v(exp, 'switchyard_circuit_state', { deployment: 'openai/gpt-4o-mini' })).toBe(0);
    expect(v(exp, 'switchyard_state_backend_healthy', { backend: 'redis' })).toBe(1);
  });

  it('shows the worst of the breakers behind one label: a pinned model that closed does not hide another still open (found by review)', async () => {
    const { bus, scrape } = setup();
    bus.emit('breaker', { deployment: 'openai/pin-a', from: 'closed', to: 'open', at: 0 });
    bus.emit('breaker', { deployment: 'openai/pin-b', from: 'closed', to: 'open', at: 0 });
    bus.emit('breaker', { deployment: 'openai/pin-b', from: 'open', to: 'half_open', at: 1 });
    bus.emit('breaker', { deployment: 'openai/pin-b', from: 'half_open', to: 'closed', at: 2 });
    expect(v(await scrape(), 'switchyard_circuit_state', { deployment: 'openai/other' })).toBe(2);
    bus.emit('breaker', { deployment: 'openai/pin-a', from: 'open', to: 'half_open', at: 3 });
    expect(v(await scrape(), 'switchyard_circuit_state', { deployment: 'openai/other' })).toBe(1);
  });

  it('keeps label cardinality bounded whatever model names clients send', async () => {
    const { bus, scrape } = setup();
    for (let i = 0; i < 500; i++) {
      const pinned = i % 3 === 0;
      const model = pinned ? `openai/made-up-${i}` : i % 3 === 1 ? `client-junk-${i}` : `nope/${i}`;
      const deployment = pinned ? model : `evil-${i}/m-${i}`;
      bus.emit('attempt', { requestId: `r${i}`, alias: model, deployment, trace: attempt({ provider: deployment.split('/')[0], model: `m-${i}` }), fallback: false });
      bus.emit('breaker', { deployment, from: 'closed', to: 'open', at: i });
      bus.emit('cooldown', { deployment, untilMs: i, reason: 'server' });
      bus.emit('throttle', { deployment, waitedMs: 1, outcome: 'skipped' });
      bus.emit('request', trace({ model, deployment, malformedEvents: 1, attempts: [attempt({ provider: 'openai', model: `x${i}` }), attempt({ provider: 'openai', model: `x${i}` })] }));
    }
    bus.emit('request', trace({ model: 'auto' }));
    const exp = await scrape();

    const values = (label: string) => {
      const set = new Set<string>();
      for (const fam of exp.values()) for (const s of fam.samples) if (s.labels[label] !== undefined) set.add(s.labels[label]!);
      return set;
    };
    expect([...values('model')].sort()).toEqual(['auto', 'other', 'pinned']);
    expect([...values('deployment')].sort()).toEqual(
      ['anthropic/claude-haiku', 'local/llama3', 'openai/gpt-4o-mini', 'openai/other', 'other'].sort(),
    );
    const series = [...exp.values()].reduce((n, f) => n + f.samples.length, 0);
    expect(series).toBeLessThan(400);
    expect(v(exp, 'switchyard_requests_total', { model: 'pinned', endpoint: 'chat', code: '200' })).toBe(167);
    expect(v(exp, 'switchyard_retries_total', { deployment: 'openai/other' })).toBe(500);
  });

  it('each gateway has its own registry; the global one stays untouched', async () => {
    const a = setup();
    const b = setup();
    a.bus.emit('request', trace());
    expect(v(await a.scrape(), 'switchyard_requests_total', { model: 'fast', endpoint: 'chat', code: '200' })).toBe(1);
    expect(v(await b.scrape(), 'switchyard_requests_total', { model: 'fast', endpoint: 'chat', code: '200' })).toBeUndefined();
    expect(await globalRegistry.metrics()).not.toContain('switchyard_');
  });

  it("credits a stream's tokens and cost per attempt, to each attempt's deployment; its request event adds none", async () => {
    const { bus, scrape } = setup();
    // Cut on one deployment, resumed on another: each attempt's event, then the request's with the sum.
    bus.emit('attemptUsage', { requestId: 'r', deployment: 'openai/gpt-4o-mini', usage: { promptTokens: 20, completionTokens: 6, costUsd: 0.00002 } });
    bus.emit('attemptUsage', { requestId: 'r', deployment: 'anthropic/claude-haiku', usage: { promptTokens: 30, completionTokens: 4, costUsd: null } });
    bus.emit(
      'request',
      trace({ id: 'r', stream: true, streamOutcome: 'resumed', deployment: 'anthropic/claude-haiku', usage: { promptTokens: 50, completionTokens: 10 }, costUsd: null }),
    );
    const exp = await scrape();
    expect(v(exp, 'switchyard_tokens_total', { deployment: 'openai/gpt-4o-mini', direction: 'in' })).toBe(20);
    expect(v(exp, 'switchyard_tokens_total', { deployment: 'openai/gpt-4o-mini', direction: 'out' })).toBe(6);
    expect(v(exp, 'switchyard_cost_usd_total', { deployment: 'openai/gpt-4o-mini' })).toBeCloseTo(0.00002, 12);
    expect(v(exp, 'switchyard_tokens_total', { deployment: 'anthropic/claude-haiku', direction: 'in' })).toBe(30);
    expect(v(exp, 'switchyard_tokens_total', { deployment: 'anthropic/claude-haiku', direction: 'out' })).toBe(4);
    expect(v(exp, 'switchyard_cost_usd_total', { deployment: 'anthropic/claude-haiku' })).toBe(0);
  });

  it('stop() unsubscribes from the bus', async () => {
    const { bus, metrics, scrape } = setup();
    bus.emit('request', trace());
    metrics.stop();
    bus.emit('request', trace());
    expect(v(await scrape(), 'switchyard_requests_total', { model: 'fast', endpoint: 'chat', code: '200' })).toBe(1);
    expect(bus.has('request')).toBe(false);
  });

  it('ignores non-finite or negative timings instead of losing the rest of the event', async () => {
    const { bus, scrape } = setup();
    bus.emit('request', trace({ durationMs: Number.NaN, overheadMs: -1, usage: { promptTokens: 3, completionTokens: 1 } }));
    const exp = await scrape();
    expect(v(exp, 'switchyard_requests_total', { model: 'fast', endpoint: 'chat', code: '200' })).toBe(1);
    expect(v(exp, 'switchyard_request_duration_seconds_count', { model: 'fast', endpoint: 'chat' })).toBeUndefined();
    expect(v(exp, 'switchyard_tokens_total', { deployment: 'openai/gpt-4o-mini', direction: 'in' })).toBe(3);
    expect(samplesNamed(exp, 'switchyard_overhead_seconds_count')[0]?.value).toBe(0);
  });
});
