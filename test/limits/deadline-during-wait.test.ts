/**
 * REVIEW: a request whose deadline passes while it waits for local capacity
 * (WaitGate) is answered 500 internal_error, traced as 499
 * client_closed_request — not 504 `timeout`. The wait rejects with the raw
 * AttemptAborted('deadline') and Executor.waitForCapacity rethrows it
 * unconverted (the retry-sleep path converts it; this one does not).
 */
import { afterEach, expect, it } from 'vitest';
import type { TraceRecord } from '../../src/observability/events.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
});

const INSTANT = { latencyMs: 0, ttftMs: 0, tokensPerSecond: 1000 };

it('the deadline passing during a throttle wait is a 504 timeout, not a 500', async () => {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1), true);
  // rpm 60: a burst of 10, then one request a second. deadline 1 s, throttle wait up to 2 s:
  // the 11th request waits exactly until its deadline.
  gw = await startGateway(
    {
      resilience: { deadlineMs: 1000, throttleMaxWaitMs: 2000 },
      providers: [{ id: 'sim', type: 'simulated', rpm: 60, simulate: INSTANT }],
      models: [{ name: 'chat', deployments: [{ provider: 'sim', model: 'sim-1' }] }],
    },
    { clock },
  );
  const send = () =>
    fetch(`${gw!.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
  for (let i = 0; i < 10; i++) expect((await send()).status).toBe(200);
  const res = await send();
  const body = (await res.json()) as { error: { code: string } };
  const traces = gw.observability.traces.query({ limit: 1 }) as TraceRecord[];
  expect({ status: res.status, code: body.error.code }).toEqual({ status: 504, code: 'timeout' });
  expect(traces[0]!.status).toBe(504);
});
