/**
 * An upstream 404 (an Ollama model not pulled, a typo in a deployment's model, a
 * deleted Azure deployment) over real loopback sockets: the official `openai`
 * client → the gateway → two OpenAI-compatible fault servers. In a pool it is the
 * deployment's fault: no retry, a cooldown like bad credentials, the next
 * candidate serves; buffered, streamed and embeddings alike. When every candidate
 * answered 404, or the client pinned the model itself, the client gets 404
 * `model_not_found` with the upstream's message. Time is a manual VirtualClock:
 * cooldowns end when the test says so.
 */
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/observability/events.js';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { fallbackPair, startGateway, type TestGateway } from '../helpers/gateway.js';
import { sampleValue, parsePrometheusText } from '../helpers/prom-parse.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const COOLDOWN_MS = 60_000;
const MISSING = { kind: 'status', status: 404, message: 'The model `p-model` does not exist or you do not have access to it.' } as const;

let primary: FaultServer;
let secondary: FaultServer;
let gw: TestGateway;
let clock: VirtualClock;
let bus: EventBus;
let client: OpenAI;

function config(extra: Record<string, unknown> = {}) {
  const pair = fallbackPair(
    primary.url,
    secondary.url,
    // One server failure would open it, for ten minutes: a 404 must not count as one.
    { maxRetries: 2, cooldownMs: COOLDOWN_MS, breaker: { failureThreshold: 1, recoveryMs: 600_000 }, ...extra },
    { p: 'p-model', s: 's-model' },
  );
  return { ...pair, models: [...pair.models, { name: 'solo', deployments: [{ provider: 'secondary', model: 'solo-model' }] }], auto: { tiers: ['chat'] } };
}

beforeAll(async () => {
  primary = await startFaultServer({ providerId: 'primary' });
  secondary = await startFaultServer({ providerId: 'secondary' });
});

afterAll(async () => {
  await primary.close();
  await secondary.close();
});

async function start(doc: Record<string, unknown> = config()) {
  clock = new VirtualClock();
  bus = new EventBus();
  gw = await startGateway(doc, { clock, bus });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
}

// A fresh gateway per test: cooldown and breaker state never leaks between cases.
beforeEach(async () => {
  primary.requests.length = 0;
  secondary.requests.length = 0;
  primary.script.clear();
  secondary.script.clear();
  await start();
});

afterEach(async () => {
  await gw.close(0);
});

const ask = (model = 'chat') => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hello' }] }).withResponse();
const traceOf = (response: Response) => gw.observability.traces.get(response.headers.get('x-request-id')!)!;
const failure = (p: Promise<unknown>) => p.then(
  () => {
    throw new Error('expected an error');
  },
  (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
);

async function metric(name: string, labels: Record<string, string>) {
  return sampleValue(parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text()), name, labels);
}

describe('a 404 in a pool fails over', () => {
  for (const model of ['chat', 'auto']) {
    it(`${model}: at once, without a retry; the deployment cools down for cooldownMs, and its breaker does not count it`, async () => {
      primary.script.enqueue(MISSING);
      const first = await ask(model);
      expect(first.data.model).toBe('s-model');
      expect(first.response.headers.get('x-switchyard-fallback')).toBe('true');
      expect(first.response.headers.get('x-switchyard-attempts')).toBe('2');
      expect(primary.requests).toHaveLength(1);
      expect(traceOf(first.response).attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
        ['primary', 404, 'not_found'],
        ['secondary', 200, null],
      ]);

      // Cooling down: passed over without a call.
      await clock.advance(COOLDOWN_MS - 1);
      const second = await ask(model);
      expect(second.data.model).toBe('s-model');
      expect(primary.requests).toHaveLength(1);
      expect(traceOf(second.response).attempts[0]!.errorType).toBe('cooldown');

      // Back after the cooldown; the breaker (threshold 1) never opened.
      await clock.advance(1);
      const third = await ask(model);
      expect(third.data.model).toBe('p-model');
      expect(gw.gateway.health.state('primary/p-model')).toBe('closed');

      expect(await metric('switchyard_upstream_attempts_total', { deployment: 'primary/p-model', outcome: 'not_found' })).toBe(1);
      expect(await metric('switchyard_cooldowns_total', { deployment: 'primary/p-model', reason: 'not_found' })).toBe(1);
    });
  }

  it('embeddings the same way', async () => {
    primary.script.enqueue(MISSING);
    const { data, response } = await client.embeddings.create({ model: 'chat', input: ['a', 'b'], encoding_format: 'float' }).withResponse();
    expect(data.data).toHaveLength(2);
    expect(response.headers.get('x-switchyard-deployment')).toBe('secondary/s-model');
    expect(primary.requests).toHaveLength(1);
    expect(traceOf(response).attempts[0]).toMatchObject({ status: 404, errorType: 'not_found' });
  });

  it('a stream whose upstream answers 404 before its first byte', async () => {
    primary.script.enqueue(MISSING);
    const { data: stream, response } = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    let text = '';
    let model = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      model = chunk.model;
    }
    expect(model).toBe('s-model');
    expect(text).toContain('secondary');
    expect(response.headers.get('x-switchyard-fallback')).toBe('true');
    expect(primary.requests).toHaveLength(1);
    expect(traceOf(response).attempts[0]).toMatchObject({ status: 404, errorType: 'not_found' });
  });
});

describe('when no candidate is left', () => {
  it('every candidate answered 404: 404 model_not_found with the last upstream message', async () => {
    primary.script.enqueue(MISSING);
    secondary.script.enqueue({ kind: 'status', status: 404, message: 'The model `s-model` does not exist or you do not have access to it.' });
    const err = await failure(ask());
    expect([err.status, err.code, err.type]).toEqual([404, 'model_not_found', 'not_found_error']);
    expect(err.message).toContain('The model `s-model` does not exist');
    expect(primary.requests).toHaveLength(1);
    expect(secondary.requests).toHaveLength(1);
  });

  it("a single-deployment alias whose model is missing: the upstream's 404, buffered and streamed", async () => {
    secondary.script.enqueue({ kind: 'status', status: 404, message: 'model "solo-model" not found, try pulling it first' });
    const buffered = await failure(ask('solo'));
    expect([buffered.status, buffered.code]).toEqual([404, 'model_not_found']);
    expect(buffered.message).toContain('model "solo-model" not found, try pulling it first');

    // Within the cooldown the deployment is not asked again, and the answer is still its 404, not a 503.
    const cooling = await failure(ask('solo'));
    expect([cooling.status, cooling.code]).toEqual([404, 'model_not_found']);
    expect(cooling.message).toContain('model "solo-model" not found, try pulling it first');
    expect(secondary.requests).toHaveLength(1);

    await clock.advance(COOLDOWN_MS); // the first 404's cooldown
    secondary.script.enqueue({ kind: 'status', status: 404, message: 'model "solo-model" not found, try pulling it first' });
    const streamed = await failure(client.chat.completions.create({ model: 'solo', stream: true, messages: [{ role: 'user', content: 'hello' }] }));
    expect([streamed.status, streamed.code]).toEqual([404, 'model_not_found']);
    expect(streamed.message).toContain('model "solo-model" not found');
  });

  it('a 404 among other failures: the usual 503 naming each candidate', async () => {
    primary.script.enqueue(MISSING);
    secondary.script.enqueue({ kind: 'rate_limit' });
    const err = await failure(ask());
    expect([err.status, err.code]).toEqual([503, 'all_candidates_unavailable']);
    expect(err.message).toContain('primary/p-model: 404 not_found');
    expect(err.message).toContain('secondary/s-model: 429 rate_limited');
  });
});

describe('a pinned model the upstream does not have', () => {
  it("is the client's 404 model_not_found with the upstream's message, and cools nothing down", async () => {
    primary.script.enqueue({ kind: 'status', status: 404, message: 'The model `p-modle` does not exist or you do not have access to it.' });
    const typo = await failure(ask('primary/p-modle'));
    expect([typo.status, typo.code]).toEqual([404, 'model_not_found']);
    expect(typo.message).toContain('The model `p-modle` does not exist');

    // Asked again at once: the upstream answers again (no cooldown), the same way.
    primary.script.enqueue({ kind: 'status', status: 404, message: 'The model `p-modle` does not exist or you do not have access to it.' });
    const again = await failure(ask('primary/p-modle'));
    expect([again.status, again.code]).toEqual([404, 'model_not_found']);
    expect(primary.requests).toHaveLength(2);
  });

  it('pinning a configured deployment: its 404 does not take it out of its alias', async () => {
    primary.script.enqueue(MISSING);
    const err = await failure(ask('primary/p-model'));
    expect([err.status, err.code]).toEqual([404, 'model_not_found']);
    const { data } = await ask('chat');
    expect(data.model).toBe('p-model');
    expect(primary.requests).toHaveLength(2);
  });
});

describe('a candidate that 404s after the request waited for its capacity', () => {
  // backup's secondary allows one request a minute; the test spends it, then asks `chat`:
  // the primary fails, the secondary is throttled, the request waits for it.
  async function throughTheWait(primaryFails: typeof MISSING | { kind: 'rate_limit' }) {
    await gw.close(0);
    await start({
      ...config({ throttleMaxWaitMs: 2 * COOLDOWN_MS, deadlineMs: 5 * COOLDOWN_MS }),
      providers: [
        { id: 'primary', type: 'openai', baseUrl: primary.url },
        { id: 'secondary', type: 'openai', baseUrl: secondary.url, rpm: 1 },
      ],
    });
    await ask('backup');
    const throttled = new Promise<void>((resolve) => bus.on('throttle', (e) => e.outcome === 'skipped' && resolve()));
    let acquired = false;
    bus.on('throttle', (e) => (acquired ||= e.outcome === 'acquired'));
    primary.script.enqueue(primaryFails);
    secondary.script.enqueue({ kind: 'status', status: 404, message: 'The model `s-model` does not exist or you do not have access to it.' });
    const pending = failure(ask());
    await Promise.race([throttled, pending]);
    // Second by second to the secondary's next request of the minute, and no further: its attempt
    // then runs over the sockets while the virtual clock stands still.
    for (let s = 0; !acquired && s < 2 * 60; s++) await clock.advance(1000);
    const err = await pending;
    expect(secondary.requests).toHaveLength(2);
    return err;
  }

  it('every candidate 404: still 404 model_not_found', async () => {
    const err = await throughTheWait(MISSING);
    expect([err.status, err.code]).toEqual([404, 'model_not_found']);
    expect(err.message).toContain('The model `s-model` does not exist');
  });

  it('another failed otherwise: 503 naming both, not the 404 alone', async () => {
    const err = await throughTheWait({ kind: 'rate_limit' });
    expect([err.status, err.code]).toEqual([503, 'all_candidates_unavailable']);
    expect(err.message).toContain('primary/p-model: 429 rate_limited');
    expect(err.message).toContain('secondary/s-model: 404 not_found');
  });
});
