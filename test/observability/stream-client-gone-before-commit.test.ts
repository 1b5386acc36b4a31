/**
 * A stream whose client left before its first token was traced and counted as
 * `failed_before_commit` — "every candidate failed before the first token" —
 * though no candidate failed: the client went away (its 499 and the attempt's
 * `aborted` said so, the stream outcome did not). It is `client_aborted`, as a
 * client leaving after the first token is (found by the observability audit).
 * Over real sockets.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TraceRecord } from '../../src/observability/events.js';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';
import { sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

let upstream: RawUpstream;
let gw: TestGateway;
let arrived: () => void;

beforeAll(async () => {
  // Answers the head of a stream, then nothing: the client leaves while it waits for the first token.
  upstream = await startRawUpstream((res) => {
    sseHead(res);
    arrived();
  });
  gw = await startChatOver(upstream.url);
});

afterAll(async () => {
  await gw.close(0);
  await upstream.close();
});

it('a stream whose client left before the first token is client_aborted, not failed_before_commit', async () => {
  const upstreamHasIt = new Promise<void>((r) => (arrived = r));
  const traced = new Promise<TraceRecord>((resolve) => {
    const off = gw.gateway.bus.on('request', (t) => {
      off();
      resolve(t);
    });
  });
  const ac = new AbortController();
  const res = fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    signal: ac.signal,
    headers: { 'content-type': 'application/json', 'x-request-id': 'left-early' },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await upstreamHasIt;
  ac.abort();
  await expect(res).rejects.toThrow();
  const t = await traced;

  expect(upstream.hits).toHaveLength(1);
  expect(t).toMatchObject({ id: 'left-early', status: 499, errorCode: 'client_closed_request', stream: true, streamOutcome: 'client_aborted' });
  expect(t.attempts.map((a) => a.errorType)).toEqual(['aborted']);
  const stored = (await (await fetch(`${gw.url}/traces/left-early`)).json()) as TraceRecord;
  expect(stored.streamOutcome).toBe('client_aborted');

  const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
  expect(sampleValue(exp, 'switchyard_stream_outcomes_total', { outcome: 'client_aborted' })).toBe(1);
  expect(sampleValue(exp, 'switchyard_stream_outcomes_total', { outcome: 'failed_before_commit' }) ?? 0).toBe(0);
  expect(sampleValue(exp, 'switchyard_upstream_attempts_total', { deployment: 'up/m', outcome: 'aborted' })).toBe(1);
  expect(sampleValue(exp, 'switchyard_requests_total', { model: 'chat', endpoint: 'chat', code: '499' })).toBe(1);
});
