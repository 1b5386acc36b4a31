/**
 * The `request` log line's `attempts` is the same count as the response's
 * x-switchyard-attempts: upstream attempts made. It was the length of the
 * trace's attempts[], which also lists candidates passed over without a call
 * (cooling down, circuit open, throttled), so a request served at its first
 * and only call after skipping a cooling primary logged `attempts: 2` while
 * its header said 1 (found by the observability audit). Over real sockets.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { createLogger } from '../../src/observability/logger.js';
import { fallbackPair, startGateway, type TestGateway } from '../helpers/gateway.js';

let primary: FaultServer;
let secondary: FaultServer;
let gw: TestGateway;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  primary = await startFaultServer();
  secondary = await startFaultServer();
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  gw = await startGateway(
    fallbackPair(primary.url, secondary.url, { maxRetries: 0 }),
    { observability: { logger: createLogger({ destination: sink, level: 'info' }) } },
  );
});

afterAll(async () => {
  await gw.close(0);
  await primary.close();
  await secondary.close();
});

const send = async (id: string) => {
  const r = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await r.arrayBuffer();
  return r;
};

it("logs the upstream attempts the response's header reports, not the candidates passed over", async () => {
  primary.script.enqueue({ kind: 'rate_limit', retryAfterS: 120 }); // the primary cools down for 2 minutes
  const first = await send('after-429');
  const second = await send('while-cooling');
  expect([primary.requests.length, secondary.requests.length]).toEqual([1, 2]);
  expect(first.headers.get('x-switchyard-attempts')).toBe('2');
  expect(second.headers.get('x-switchyard-attempts')).toBe('1');

  await new Promise((r) => setImmediate(r)); // request lines are written on the next turn
  const logged = Object.fromEntries(lines.filter((l) => l.event === 'request').map((l) => [l.id, l.attempts]));
  expect(logged).toEqual({ 'after-429': 2, 'while-cooling': 1 });
});
