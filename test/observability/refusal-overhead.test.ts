/**
 * Requests the gateway refuses after reading the body (an unknown model, a
 * key over its quota, a data class no candidate meets) are traced and observed
 * in switchyard_overhead_seconds like every routed request, but with an
 * overhead of exactly 0 — the figure was only frozen once routing ran — though
 * all of their time was the gateway's own: a 0 ms sample per refusal pulled
 * the documented overhead percentiles down (found by the observability audit).
 * Over real sockets.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TraceRecord } from '../../src/observability/events.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway(
    {
      providers: [{ id: 'sim', type: 'simulated', locality: 'external', simulate: { latencyMs: 0, ttftMs: 0 } }],
      models: [{ name: 'chat', deployments: [{ provider: 'sim', model: 'sim-1' }] }],
      keys: [{ id: 'team', key: '${TEAM_KEY}', rpm: 1 }],
    },
    { env: { TEAM_KEY: 'sk-team' } },
  );
});

afterAll(async () => {
  await gw.close(0);
});

const send = (id: string, model: string, headers: Record<string, string> = {}) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-team', 'x-request-id': id, ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

it('a refusal after the body was read is traced with the time the gateway spent on it', async () => {
  const statuses: number[] = [];
  for (const [id, model, headers] of [
    ['served', 'chat', {}],
    ['unknown-model', 'nope', {}],
    ['policy', 'chat', { 'x-switchyard-data-class': 'restricted' }],
    ['bad-class', 'chat', { 'x-switchyard-data-class': 'secret' }],
    ['over-quota', 'chat', {}],
  ] as const) {
    const r = await send(id, model, headers);
    statuses.push(r.status);
    await r.arrayBuffer();
  }
  expect(statuses).toEqual([200, 404, 403, 400, 429]);

  const traces: TraceRecord[] = [];
  for (const id of ['served', 'unknown-model', 'policy', 'bad-class', 'over-quota']) {
    traces.push((await (await fetch(`${gw.url}/traces/${id}`)).json()) as TraceRecord);
  }
  for (const t of traces.slice(1)) {
    expect(t.attempts, t.id).toEqual([]);
    expect(t.overheadMs, t.id).toBeGreaterThan(0);
    expect(t.overheadMs, t.id).toBeLessThanOrEqual(t.durationMs);
  }

  const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
  expect(sampleValue(exp, 'switchyard_overhead_seconds_count')).toBe(5);
  const sum = traces.reduce((s, t) => s + t.overheadMs, 0) / 1000;
  expect(sampleValue(exp, 'switchyard_overhead_seconds_sum')).toBeCloseTo(sum, 9);
});
