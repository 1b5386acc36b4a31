/**
 * Fail-over over real loopback sockets: the official `openai` client → the
 * gateway → two OpenAI-compatible fault servers. Each test scripts exactly what
 * the primary does and checks what the client sees and what the gateway says
 * it did (x-switchyard-* headers and the trace).
 */
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let primary: FaultServer;
let secondary: FaultServer;
let gw: TestGateway;
let client: OpenAI;

function config(extra: Record<string, unknown> = {}) {
  return {
    resilience: {
      requestTimeoutMs: 400,
      ttftTimeoutMs: 400,
      idleTimeoutMs: 400,
      maxRetries: 2,
      backoff: { baseMs: 1, maxMs: 5 },
      cooldownMs: 50,
      breaker: { failureThreshold: 100, recoveryMs: 50 },
      ...extra,
    },
    providers: [
      { id: 'primary', type: 'openai', baseUrl: primary.url },
      { id: 'secondary', type: 'openai', baseUrl: secondary.url },
    ],
    models: [
      { name: 'chat', deployments: [{ provider: 'primary', model: 'p-model' }], fallbacks: ['backup'] },
      { name: 'backup', deployments: [{ provider: 'secondary', model: 's-model' }] },
    ],
  };
}

beforeAll(async () => {
  primary = await startFaultServer({ providerId: 'primary' });
  secondary = await startFaultServer({ providerId: 'secondary' });
});

afterAll(async () => {
  await primary.close();
  await secondary.close();
});

// A fresh gateway per test: breaker and cooldown state never leaks between cases.
beforeEach(async () => {
  primary.requests.length = 0;
  secondary.requests.length = 0;
  primary.script.clear();
  secondary.script.clear();
  gw = await startGateway(config());
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
});

afterEach(async () => {
  await gw.close(0);
});

const ask = () => client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hello' }] }).withResponse();

describe('buffered fail-over', () => {
  it('serves from the primary when it is healthy', async () => {
    const { data, response } = await ask();
    expect(data.model).toBe('p-model');
    expect(data.choices[0]!.message.content).toContain('primary');
    expect(response.headers.get('x-switchyard-deployment')).toBe('primary/p-model');
    expect(response.headers.get('x-switchyard-fallback')).toBe('false');
    expect(response.headers.get('x-switchyard-attempts')).toBe('1');
    expect(Number(response.headers.get('x-switchyard-overhead-ms'))).toBeGreaterThanOrEqual(0);
  });

  for (const [name, plan] of [
    ['429 without Retry-After', { kind: 'rate_limit' }],
    ['429 with a long Retry-After', { kind: 'rate_limit', retryAfterS: 60 }],
    ['401 (misconfigured key)', { kind: 'status', status: 401 }],
    // The deployment's route is not there: a baseUrl whose path takes no POST, a retired model.
    ['405 (a wrong baseUrl)', { kind: 'status', status: 405, message: 'Method Not Allowed' }],
    ['410 (a retired model)', { kind: 'status', status: 410, message: 'This model has been deprecated' }],
    ['451 (not served in this region)', { kind: 'status', status: 451 }],
  ] as const) {
    it(`fails over at once on ${name}`, async () => {
      primary.script.enqueue(plan);
      const { data, response } = await ask();
      expect(data.model).toBe('s-model');
      expect(response.headers.get('x-switchyard-fallback')).toBe('true');
      expect(response.headers.get('x-switchyard-attempts')).toBe('2');
      expect(primary.requests).toHaveLength(1);
    });
  }

  for (const [name, plan] of [
    ['500', { kind: 'status', status: 500 }],
    ['503', { kind: 'status', status: 503 }],
    ['529', { kind: 'status', status: 529 }],
    // 450–499 are no standard client error but vendors' own, about the route and not the request.
    ["498 (Groq's flex tier capacity exceeded)", { kind: 'status', status: 498, message: 'Flex tier capacity exceeded. Please try again later.' }],
    ['499 (request cancelled on the upstream side)', { kind: 'status', status: 499 }],
    ['415 (the route refuses what the gateway sends)', { kind: 'status', status: 415 }],
    ['a connection reset', { kind: 'reset' }],
  ] as const) {
    it(`retries ${name} up to maxRetries, then fails over`, async () => {
      for (let i = 0; i < 3; i++) primary.script.enqueue(plan);
      const { data, response } = await ask();
      expect(data.model).toBe('s-model');
      expect(primary.requests).toHaveLength(3); // 1 + maxRetries
      expect(response.headers.get('x-switchyard-attempts')).toBe('4');
      const trace = gw.observability.traces.get(response.headers.get('x-request-id')!)!;
      expect(trace.fallbackUsed).toBe(true);
      expect(trace.retryCount).toBe(3);
      expect(trace.attempts.map((a) => a.provider)).toEqual(['primary', 'primary', 'primary', 'secondary']);
    });
  }

  it('retries then succeeds on the same candidate', async () => {
    primary.script.enqueue({ kind: 'status', status: 502 });
    const { data, response } = await ask();
    expect(data.model).toBe('p-model');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    expect(response.headers.get('x-switchyard-fallback')).toBe('false');
    expect(secondary.requests).toHaveLength(0);
  });

  it('waits out a short Retry-After and retries the same candidate', async () => {
    primary.script.enqueue({ kind: 'rate_limit', retryAfterS: 0 });
    const { data } = await ask();
    expect(data.model).toBe('p-model');
    expect(primary.requests).toHaveLength(2);
  });

  it('fails over at once when the primary hangs past the attempt timeout (no retry of a silent route)', async () => {
    primary.script.enqueue({ kind: 'hang' });
    const t0 = Date.now();
    const { data, response } = await ask();
    expect(data.model).toBe('s-model');
    expect(primary.requests).toHaveLength(1);
    expect(Date.now() - t0).toBeLessThan(2000);
    const trace = gw.observability.traces.get(response.headers.get('x-request-id')!)!;
    expect(trace.attempts[0]!.errorType).toBe('timeout');
  });

  it('fails fast on a 400 and passes the upstream message through', async () => {
    primary.script.enqueue({ kind: 'status', status: 400, message: 'unsupported parameter: foo' });
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('unsupported parameter: foo');
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('invalid_request');
    expect(secondary.requests).toHaveLength(0);
  });

  it('answers 503 all_candidates_unavailable with Retry-After when every candidate fails', async () => {
    for (let i = 0; i < 3; i++) primary.script.enqueue({ kind: 'status', status: 500 });
    secondary.script.enqueue({ kind: 'rate_limit', retryAfterS: 30 });
    const err = (await ask().catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(err.status).toBe(503);
    expect(err.code).toBe('all_candidates_unavailable');
    expect(err.message).toContain('primary/p-model: 500 server');
    expect(err.message).toContain('secondary/s-model: 429 rate_limited');
    expect(Number(err.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('streaming fail-over', () => {
  const stream = () =>
    client.chat.completions.create({ model: 'chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hello' }] });

  async function collect() {
    const s = await stream();
    let text = '';
    let model = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null = null;
    for await (const chunk of s) {
      model = chunk.model;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    return { text, model, usage, finish };
  }

  it('fails over before the first token (429 / 500 / cut before any content)', async () => {
    primary.script.enqueue({ kind: 'rate_limit' });
    let r = await collect();
    expect(r.model).toBe('s-model');
    expect(r.text).toContain('secondary');
    expect(r.usage?.completion_tokens).toBeGreaterThan(0);

    await new Promise((res) => setTimeout(res, 60)); // the 429's cooldown (50 ms) expires
    for (let i = 0; i < 3; i++) primary.script.enqueue({ kind: 'stream_abort', afterChunks: 0 });
    r = await collect();
    expect(r.model).toBe('s-model');
    expect(r.finish).toBe('stop');
  });

  it('ends with an honest error event when the stream breaks after the first token and nothing can continue it', async () => {
    primary.script.enqueue({ kind: 'stream_abort', afterChunks: 3 });
    const s = await stream();
    let text = '';
    const err = await (async () => {
      for await (const chunk of s) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String((err as Error).message)).toMatch(/broke after/);
    expect(text.length).toBeGreaterThan(0);
    // Recorded: the trace says the stream broke.
    await new Promise((res) => setTimeout(res, 20));
    const [trace] = gw.observability.traces.query({ limit: 1 });
    expect(trace!.streamOutcome).toBe('broken');
    expect(trace!.status).toBe(200);
  });
});

describe('embeddings through the same chains', () => {
  it('fails over on 5xx and serves from the fallback', async () => {
    for (let i = 0; i < 3; i++) primary.script.enqueue({ kind: 'status', status: 503 });
    const { data, response } = await client.embeddings.create({ model: 'chat', input: ['a', 'b'], encoding_format: 'float' }).withResponse();
    expect(data.data).toHaveLength(2);
    expect(data.data[0]!.embedding.length).toBeGreaterThan(0);
    expect(response.headers.get('x-switchyard-deployment')).toBe('secondary/s-model');
    expect(response.headers.get('x-switchyard-fallback')).toBe('true');
    expect(primary.requests).toHaveLength(3);
  });
});
