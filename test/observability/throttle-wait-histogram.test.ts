/**
 * switchyard_throttle_wait_seconds is "how long requests waited" for local
 * capacity. It also took a 0 s sample for every candidate skipped as throttled
 * and every request answered at once because the earliest capacity was beyond
 * throttleMaxWaitMs — neither waited — so under load (where every request
 * skips the throttled tier) its count was the number of throttle events and
 * its percentiles read 0 while the requests that did wait waited seconds
 * (found by the observability audit). Over real sockets, on a VirtualClock.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOverFaultServer, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const clock = new VirtualClock();
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ gw, close } = await startOverFaultServer(
    [
      // A burst of 10, then one request a second: the 11th waits a second.
      { name: 'second', deployments: [{ provider: 'up', model: 'per-second', rpm: 60 }] },
      // One request a minute: the 2nd would wait far beyond the 2 s budget, so it does not wait.
      { name: 'minute', deployments: [{ provider: 'up', model: 'per-minute', rpm: 1 }] },
      { name: 'left', deployments: [{ provider: 'up', model: 'left', rpm: 60 }] },
    ],
    { throttleMaxWaitMs: 2000 },
    clock,
  ));
});

afterAll(() => close());

const send = (model: string, signal?: AbortSignal) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    signal,
  });

const nextThrottle = (outcome: string) =>
  new Promise<void>((resolve) => {
    const off = gw.gateway.bus.on('throttle', (e) => {
      if (e.outcome !== outcome) return;
      off();
      resolve();
    });
  });

it('observes the requests that waited for capacity, not the candidates passed over without waiting', async () => {
  for (let i = 0; i < 10; i++) expect((await send('second')).status).toBe(200);
  const skipped = nextThrottle('skipped');
  const waiting = send('second');
  await skipped;
  await clock.advance(1000);
  expect((await waiting).status).toBe(200);

  expect((await send('minute')).status).toBe(200);
  const refused = await send('minute');
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).not.toBeNull();

  const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
  const waits = (deployment: string, outcome: string) => sampleValue(exp, 'switchyard_throttle_waits_total', { deployment, outcome }) ?? 0;
  expect([waits('up/per-second', 'skipped'), waits('up/per-second', 'acquired')]).toEqual([1, 1]);
  expect([waits('up/per-minute', 'skipped'), waits('up/per-minute', 'beyond_budget')]).toEqual([1, 1]);
  // One request waited, for a second; the skips and the refusal waited for nothing.
  expect(sampleValue(exp, 'switchyard_throttle_wait_seconds_count', { deployment: 'up/per-second' })).toBe(1);
  expect(sampleValue(exp, 'switchyard_throttle_wait_seconds_sum', { deployment: 'up/per-second' })).toBe(1);
  expect(sampleValue(exp, 'switchyard_throttle_wait_seconds_count', { deployment: 'up/per-minute' }) ?? 0).toBe(0);
});

it('counts a wait the client left as aborted, and does not observe it', async () => {
  for (let i = 0; i < 10; i++) expect((await send('left')).status).toBe(200);
  const client = new AbortController();
  const skipped = nextThrottle('skipped');
  const waiting = send('left', client.signal).catch((e: unknown) => e);
  await skipped;
  const aborted = nextThrottle('aborted');
  client.abort();
  await aborted;
  expect(await waiting).toBeInstanceOf(Error);

  const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
  expect(sampleValue(exp, 'switchyard_throttle_waits_total', { deployment: 'up/left', outcome: 'aborted' })).toBe(1);
  expect(sampleValue(exp, 'switchyard_throttle_wait_seconds_count', { deployment: 'up/left' }) ?? 0).toBe(0);
});
