/**
 * Gemini ends a candidate with finishReason MISSING_THOUGHT_SIGNATURE when the request's
 * history lacks the thought signatures the model requires on earlier function calls: the
 * request's fault, not the deployment's. Over real loopback sockets (the official `openai`
 * client → the gateway → two loopback Gemini servers), with retries allowed and a breaker
 * that opens at the first failure: the attempt is not retried on that deployment, the
 * request moves on to the next candidate, and the deployment's breaker stays closed (its
 * next request is served there). When every candidate refuses so, the client gets a 400.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeFallbackPair, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startGeminiServer, type GeminiServer } from '../servers/gemini-server.js';

let primary: GeminiServer;
let secondary: GeminiServer;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  primary = await startGeminiServer();
  secondary = await startGeminiServer();
  const resilience = { maxRetries: 2, backoff: { baseMs: 1, maxMs: 1 }, breaker: { failureThreshold: 1, recoveryMs: 600_000 } };
  const doc = nativeFallbackPair('gemini', { id: 'g1', url: primary.url, model: 'gemini-3-pro-preview' }, { id: 'g2', url: secondary.url, model: 'gemini-2.5-pro' }, resilience);
  gw = await startGateway(doc, { env: { UPSTREAM_KEY: 'k' } });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
});

afterAll(async () => {
  await gw.close();
  await primary.close();
  await secondary.close();
});

const messages = [{ role: 'user' as const, content: 'What is the weather in Paris?' }];
const attempts = (requestId: string | null) => gw.observability.traces.get(requestId!)!.attempts.map((a) => [a.provider, a.errorType]);

describe('gemini MISSING_THOUGHT_SIGNATURE', () => {
  it.each([false, true])('stream %s: fails over without a retry or a breaker failure; the deployment serves the next request', async (stream) => {
    const hits = primary.requests.length;
    primary.enqueue({ kind: 'no_content', finishReason: 'MISSING_THOUGHT_SIGNATURE' });
    secondary.enqueue({ kind: 'text', text: 'Sunny.' });
    const first = await client.chat.completions.create({ model: 'chat', messages, stream }).withResponse();
    if (stream) for await (const _ of first.data as AsyncIterable<unknown>);
    expect(first.response.headers.get('x-switchyard-deployment')).toBe('g2/gemini-2.5-pro');
    expect(primary.requests.length - hits).toBe(1); // not retried there
    expect(attempts(first.response.headers.get('x-request-id'))).toEqual([
      ['g1', 'invalid_request'],
      ['g2', null],
    ]);

    // A breaker that opens at the first failure is still closed: g1 serves.
    primary.enqueue({ kind: 'text', text: 'Cloudy.' });
    const next = await client.chat.completions.create({ model: 'chat', messages }).withResponse();
    expect(next.response.headers.get('x-switchyard-deployment')).toBe('g1/gemini-3-pro-preview');
    expect(next.data.choices[0]!.message.content).toBe('Cloudy.');
  });

  it('when every candidate ends so, the client gets a 400 naming the reason, not a 503', async () => {
    primary.enqueue({ kind: 'no_content', finishReason: 'MISSING_THOUGHT_SIGNATURE' });
    secondary.enqueue({ kind: 'no_content', finishReason: 'MISSING_THOUGHT_SIGNATURE' });
    const err = await client.chat.completions.create({ model: 'chat', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('invalid_request');
    expect(String((err as Error).message)).toContain('MISSING_THOUGHT_SIGNATURE');
  });
});
