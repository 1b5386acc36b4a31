/**
 * x-switchyard-overhead-ms, the trace's overheadMs and switchyard_overhead_seconds
 * are the gateway's own time, "upstream time and waits excluded". A wait that
 * ended because the request did — the client left (or the shutdown grace ran
 * out) during a retry's backoff or a wait for local capacity — was not
 * excluded: its time was counted as the gateway's own, so one impatient client
 * during a 5 s backoff put a multi-second sample in the overhead histogram
 * (found by the observability audit). Over real sockets, on a VirtualClock:
 * the waits park on virtual time while the test lets real time pass.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import type { FaultServer } from '../../src/providers/simulated/http-server.js';
import type { GatewayEventMap, TraceRecord } from '../../src/observability/events.js';
import { startOverFaultServer, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

/** Real time the client spends waiting before it leaves: far above any request's own gateway time. */
const PARKED_MS = 150;

const clock = new VirtualClock();
let upstream: FaultServer;
let gw: TestGateway;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ gw, upstream, close } = await startOverFaultServer(
    [
      { name: 'chat', deployments: [{ provider: 'up', model: 'm' }] },
      // A burst of 10, then one request a second.
      { name: 'paced', deployments: [{ provider: 'up', model: 'p', rpm: 60 }] },
    ],
    { maxRetries: 2, backoff: { baseMs: 5000, maxMs: 5000 }, throttleMaxWaitMs: 5000 },
    clock,
  ));
});

afterAll(() => close());

const send = (model: string, id?: string, signal?: AbortSignal) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', ...(id ? { 'x-request-id': id } : {}) },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

const next = <K extends 'attempt' | 'throttle'>(name: K, pred: (e: GatewayEventMap[K]) => boolean) =>
  new Promise<void>((resolve) => {
    const off = gw.gateway.bus.on(name, (e) => {
      if (!pred(e)) return;
      off();
      resolve();
    });
  });

/** The client sends, waits until `parked` (the gateway is waiting), lets PARKED_MS of real time pass, and leaves. */
async function leaveWhileParked(model: string, id: string, parked: Promise<void>): Promise<TraceRecord> {
  const traced = new Promise<TraceRecord>((resolve) => {
    const off = gw.gateway.bus.on('request', (t) => {
      if (t.id !== id) return;
      off();
      resolve(t);
    });
  });
  const ac = new AbortController();
  const res = send(model, id, ac.signal).catch(() => undefined);
  await parked;
  const until = performance.now() + PARKED_MS;
  while (performance.now() < until); // real time passes; the gateway's wait is on the virtual clock
  ac.abort();
  await res;
  return traced;
}

it('a client that leaves during a backoff: the wait is not the gateway overhead', async () => {
  upstream.script.enqueue({ kind: 'status', status: 500 });
  const t = await leaveWhileParked('chat', 'left-in-backoff', next('attempt', (e) => e.trace.errorType === 'server'));
  expect(t.status).toBe(499);
  expect(t.attempts.map((a) => a.errorType)).toEqual(['server']);
  expect(t.durationMs).toBeGreaterThanOrEqual(PARKED_MS);
  expect(t.overheadMs).toBeLessThan(PARKED_MS / 2);
});

it('a client that leaves during a wait for capacity: the wait is not the gateway overhead', async () => {
  for (let i = 0; i < 10; i++) await (await send('paced')).arrayBuffer();
  const t = await leaveWhileParked('paced', 'left-in-throttle-wait', next('throttle', (e) => e.outcome === 'skipped'));
  expect(t.status).toBe(499);
  expect(t.attempts.map((a) => a.errorType)).toEqual(['throttled']);
  expect(t.durationMs).toBeGreaterThanOrEqual(PARKED_MS);
  expect(t.overheadMs).toBeLessThan(PARKED_MS / 2);
});
