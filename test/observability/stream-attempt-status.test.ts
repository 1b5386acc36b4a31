/**
 * An attempt's `status` in the trace is the upstream's HTTP status, 0 only
 * when there was none (operations.md: a network error, a timeout before
 * headers, a candidate skipped). A stream whose upstream answered 200 and then
 * went silent past ttftTimeoutMs, or was cut before its first token, was
 * traced with status 0 — as if nothing had answered — while the same cut a
 * token later kept its 200 (found by the observability audit). Telling "never
 * answered" from "answered, then stalled" is what an operator reads it for.
 * Over real sockets, on a VirtualClock.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import type { TraceRecord } from '../../src/observability/events.js';
import { fallbackPair, startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk, writeWords, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

type Behaviour = (res: ServerResponse) => void | Promise<void>;
const plans: Behaviour[] = [];
const clock = new VirtualClock();
let primary: RawUpstream;
let secondary: RawUpstream;
let gw: TestGateway;
let arrived: (() => void) | undefined;

const answer: Behaviour = async (res) => {
  sseHead(res);
  res.write(chunk('s1', { role: 'assistant', content: '' }));
  await writeWords(res, 's1', ['fine']);
  res.write(chunk('s1', {}, 'stop'));
  res.end(`${usageChunk('s1', 3, 1)}data: [DONE]\n\n`);
};

beforeAll(async () => {
  primary = await startRawUpstream(async (res) => {
    await plans.shift()!(res);
    arrived?.();
  });
  secondary = await startRawUpstream(answer);
  gw = await startGateway(
    fallbackPair(primary.url, secondary.url, { maxRetries: 0, ttftTimeoutMs: 1000 }),
    { clock },
  );
});

afterAll(async () => {
  await gw.close(0);
  await primary.close();
  await secondary.close();
});

async function stream(id: string, whileOut?: () => Promise<void>): Promise<TraceRecord> {
  const traced = new Promise<TraceRecord>((resolve) => {
    const off = gw.gateway.bus.on('request', (t) => {
      if (t.id !== id) return;
      off();
      resolve(t);
    });
  });
  const res = fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await whileOut?.();
  const r = await res;
  expect(r.status).toBe(200);
  expect(await r.text()).toContain('fine');
  return traced;
}

it('a stream that answered 200, then went silent past ttftTimeoutMs, keeps its 200', async () => {
  const headSent = new Promise<void>((r) => (arrived = r));
  plans.push((res) => {
    sseHead(res);
    res.write(chunk('p1', { role: 'assistant', content: '' }));
  });
  const t = await stream('silent-after-head', async () => {
    await headSent;
    // Let the gateway read the head (loopback I/O, a few event-loop turns) before its TTFT timer fires.
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    await clock.advance(1000);
  });
  expect(t.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
    ['primary', 200, 'timeout'],
    ['secondary', 200, null],
  ]);
});

it('a stream cut before its first token keeps its 200; one that never answered is 0', async () => {
  plans.push((res) => {
    sseHead(res);
    res.write(chunk('p1', { role: 'assistant', content: '' }));
    res.destroy();
  });
  const cut = await stream('cut-before-token');
  expect(cut.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
    ['primary', 200, 'network'],
    ['secondary', 200, null],
  ]);

  plans.push((res) => void res.destroy()); // no answer at all
  const reset = await stream('reset-before-head');
  expect(reset.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
    ['primary', 0, 'network'],
    ['secondary', 200, null],
  ]);
});
