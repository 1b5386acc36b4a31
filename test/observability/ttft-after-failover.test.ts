/**
 * switchyard_ttft_seconds is documented as request start → first content token
 * to the client, and the trace's ttftMs feeds it. Both were the serving
 * attempt's own time to first token (found by the observability audit): a
 * stream that failed over after the primary's failure (or its TTFT timeout)
 * reported only the fallback's TTFT, so the metric never showed what fail-over
 * cost the client. Over real sockets, with the official openai SDK.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import type { TraceRecord } from '../../src/observability/events.js';
import { fallbackPair, startGateway, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';

let primary: FaultServer;
let secondary: FaultServer;
let gw: TestGateway;

beforeAll(async () => {
  primary = await startFaultServer();
  secondary = await startFaultServer();
  gw = await startGateway(fallbackPair(primary.url, secondary.url, { maxRetries: 0 }));
});

afterAll(async () => {
  await gw.close(0);
  await primary.close();
  await secondary.close();
});

it("a stream's TTFT runs from the request's start, the failed attempt before it included", async () => {
  primary.script.enqueue({ kind: 'status', status: 503 });
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
  const { data: stream, response } = await client.chat.completions
    .create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] })
    .withResponse();
  for await (const _ of stream);
  expect(response.headers.get('x-switchyard-attempts')).toBe('2');
  expect([primary.requests.length, secondary.requests.length]).toEqual([1, 1]);

  const t = (await (await fetch(`${gw.url}/traces/${response.headers.get('x-request-id')}`)).json()) as TraceRecord;
  const [failed, served] = t.attempts;
  expect([failed!.errorType, served!.errorType]).toEqual(['server', null]);
  // The client waited for the primary's 503, then for the secondary's first token.
  expect(t.ttftMs).toBeGreaterThanOrEqual(failed!.latencyMs + served!.ttftMs!);
  expect(t.ttftMs).toBeLessThanOrEqual(t.durationMs);

  const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
  expect(sampleValue(exp, 'switchyard_ttft_seconds_count', { model: 'chat' })).toBe(1);
  expect(sampleValue(exp, 'switchyard_ttft_seconds_sum', { model: 'chat' })).toBeCloseTo(t.ttftMs! / 1000, 9);
});
