/**
 * A deployment whose price names `cachedInput` has its prompt cache's hits
 * (`prompt_tokens_details.cached_tokens`, as OpenAI reports them) priced at
 * that, over real sockets, buffered and streamed: the trace's cost is what the
 * provider bills, not every prompt token at the full input price.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TraceRecord } from '../../src/observability/events.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { answersWithUsage, startRawUpstream } from '../helpers/raw-upstream.js';

const USAGE = { prompt_tokens: 2000, completion_tokens: 100, total_tokens: 2100, prompt_tokens_details: { cached_tokens: 1500, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };
// 500 uncached at 3 $/M, 1,500 cached at 0.3 $/M, 100 out at 15 $/M
const BILLED = (500 * 3 + 1500 * 0.3 + 100 * 15) / 1e6;
const UNDISCOUNTED = (2000 * 3 + 100 * 15) / 1e6;

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

async function setup(price: Record<string, number>, usage = JSON.stringify(USAGE)): Promise<{ gw: TestGateway; traces: TraceRecord[] }> {
  const upstream = await startRawUpstream(answersWithUsage(usage));
  closers.push(() => upstream.close());
  const gw = await startGateway({
    providers: [{ id: 'up', type: 'openai', baseUrl: upstream.url }],
    models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm', price }] }],
  });
  closers.push(() => gw.close(0));
  const traces: TraceRecord[] = [];
  gw.gateway.bus.on('request', (t) => traces.push(t));
  return { gw, traces };
}

const ask = (gw: TestGateway, stream: boolean) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream, messages: [{ role: 'user', content: 'the long shared prefix…' }] }),
  });

const PRICE = { input: 3, output: 15, cachedInput: 0.3 };

/** The trace of one request through a gateway at `price` whose upstream reports `usage`. */
async function traceOf(usage: string, stream: boolean, price: Record<string, number> = PRICE): Promise<TraceRecord> {
  const { gw, traces } = await setup(price, usage);
  await (await ask(gw, stream)).text();
  await expect.poll(() => traces.length).toBe(1);
  return traces[0]!;
}

describe('prompt cache hits priced at cachedInput', () => {
  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'buffered'}: the trace's cost prices the hits at cachedInput, and the answer's usage is the upstream's`, async () => {
      const { gw, traces } = await setup(PRICE);
      const res = await ask(gw, stream);
      expect(res.status).toBe(200);
      const text = await res.text();
      if (!stream) expect(JSON.parse(text).usage).toEqual(USAGE);
      await expect.poll(() => traces.length).toBe(1);
      expect(traces[0]!.usage).toEqual({ promptTokens: 2000, completionTokens: 100 });
      expect(traces[0]!.costUsd).toBeCloseTo(BILLED, 12);
    });
  }

  it('without cachedInput, every prompt token is priced as input, as before', async () => {
    expect((await traceOf(JSON.stringify(USAGE), false, { input: 3, output: 15 })).costUsd).toBeCloseTo(UNDISCOUNTED, 12);
  });

  it('buffered: a repeated prompt_tokens_details is read as JSON.parse reads it, the last one (here without hits): no discount the client does not see', async () => {
    const usage = '{"prompt_tokens":2000,"completion_tokens":100,"total_tokens":2100,"prompt_tokens_details":{"cached_tokens":1500},"prompt_tokens_details":{"audio_tokens":0}}';
    const { gw, traces } = await setup(PRICE, usage);
    const res = await ask(gw, false);
    expect(JSON.parse(await res.text()).usage.prompt_tokens_details).toEqual({ audio_tokens: 0 });
    await expect.poll(() => traces.length).toBe(1);
    expect(traces[0]!.costUsd).toBeCloseTo(UNDISCOUNTED, 12);
  });

  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'buffered'}: cache hits reported beside no prompt count are not applied to the gateway's own count of the prompt`, async () => {
      const trace = await traceOf('{"completion_tokens":100,"prompt_tokens_details":{"cached_tokens":1500}}', stream);
      const { promptTokens, completionTokens } = trace.usage!;
      expect(completionTokens).toBe(100);
      expect(trace.costUsd).toBeCloseTo((promptTokens * 3 + 100 * 15) / 1e6, 12);
    });
  }

  it('buffered: counts a server wrote as floats (1500.0) are the whole numbers JSON.parse reads, hits included', async () => {
    const trace = await traceOf('{"prompt_tokens":2000.0,"completion_tokens":100.0,"total_tokens":2100.0,"prompt_tokens_details":{"cached_tokens":1500.0}}', false);
    expect(trace.usage).toEqual({ promptTokens: 2000, completionTokens: 100 });
    expect(trace.costUsd).toBeCloseTo(BILLED, 12);
  });

  for (const stream of [false, true]) {
    it(`${stream ? 'streamed' : 'buffered'}: hits of a reported prompt count are priced though the completion had to be counted`, async () => {
      const trace = await traceOf('{"prompt_tokens":2000,"prompt_tokens_details":{"cached_tokens":1500}}', stream);
      const { promptTokens, completionTokens } = trace.usage!;
      expect(promptTokens).toBe(2000);
      expect(trace.costUsd).toBeCloseTo((500 * 3 + 1500 * 0.3 + completionTokens * 15) / 1e6, 12);
    });
  }
});
