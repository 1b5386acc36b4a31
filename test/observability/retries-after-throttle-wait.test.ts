/**
 * switchyard_retries_total counts "an attempt repeated on the same
 * deployment". A request that found its deployment out of local capacity,
 * waited for it (throttleMaxWaitMs) and was then served made ONE upstream
 * call — x-switchyard-attempts 1, retryCount 0 — but its trace lists the
 * throttled skip and the call on the same deployment side by side, and the
 * metric counted that pair as a retry (found by the observability audit).
 * Over real sockets, on a VirtualClock.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FaultServer } from '../../src/providers/simulated/http-server.js';
import type { TraceRecord } from '../../src/observability/events.js';
import { startOverFaultServer, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const clock = new VirtualClock();
let upstream: FaultServer;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  // rpm 60: a burst of 10, then one request a second.
  ({ gw, upstream, close } = await startOverFaultServer(
    [{ name: 'chat', deployments: [{ provider: 'up', model: 'm', rpm: 60 }] }],
    { throttleMaxWaitMs: 2000 },
    clock,
  ));
});

afterAll(() => close());

const send = () =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
  });

it('a request served after waiting for capacity made one call, and no retry is counted', async () => {
  for (let i = 0; i < 10; i++) expect((await send()).status).toBe(200);
  const skipped = new Promise<void>((resolve) => {
    const off = gw.gateway.bus.on('throttle', (e) => {
      if (e.outcome !== 'skipped') return;
      off();
      resolve();
    });
  });
  const pending = send();
  await skipped; // the 11th found no capacity and waits for the next second's
  await clock.advance(1000);
  const res = await pending;
  expect(res.status).toBe(200);
  await res.arrayBuffer();

  expect(upstream.requests).toHaveLength(11);
  expect(res.headers.get('x-switchyard-attempts')).toBe('1');
  const t = (await (await fetch(`${gw.url}/traces/${res.headers.get('x-request-id')}`)).json()) as TraceRecord;
  expect(t.attempts.map((a) => a.errorType)).toEqual(['throttled', null]);
  expect(t.retryCount).toBe(0);

  const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
  expect(sampleValue(exp, 'switchyard_throttle_waits_total', { deployment: 'up/m', outcome: 'acquired' })).toBe(1);
  expect(sampleValue(exp, 'switchyard_upstream_attempts_total', { deployment: 'up/m', outcome: 'success' })).toBe(11);
  expect(sampleValue(exp, 'switchyard_retries_total', { deployment: 'up/m' }) ?? 0).toBe(0);
});
