/**
 * A stream's tokens and cost are credited in switchyard_tokens_total and
 * switchyard_cost_usd_total to the deployment that produced them, attempt by
 * attempt: a stream cut on one deployment and resumed on another credited the
 * whole request (the cut attempt's tokens included) to the one that finished it,
 * so the first deployment's spend never showed. The trace's costUsd prices each
 * attempt at its own deployment's price too (it priced every token at the last
 * one's), and the metrics add up to it. Over real sockets, read from /metrics.
 */
import { afterEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue, type Exposition } from '../helpers/prom-parse.js';
import { chunk, sseHead, startRawUpstream, usageChunk, writeWords } from '../helpers/raw-upstream.js';
import { seenText, traceOf } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const WORDS = ['one ', 'two ', 'three ', 'four.'];
const CONTINUATION = { prompt: 40, completion: 2 };
const PRICE = { cheap: { input: 1, output: 2 }, dear: { input: 30, output: 40 } };

/** What the client of streamOnce has read: the primary cuts once it has the two words, so after the commit. */
let client = seenText();

/** `chat` over a/cheap (cut after two words, no usage) with the fallback alias `backup` over b/dear (prefill, finishes). */
async function setup(streamResume: boolean): Promise<TestGateway> {
  const primary = await startRawUpstream(async (res) => {
    sseHead(res);
    res.write(chunk('cheap', { role: 'assistant', content: '' }));
    await writeWords(res, 'cheap', WORDS.slice(0, 2));
    await client.reached(`"${WORDS[1]}"`);
    res.destroy();
  });
  closers.push(() => primary.close());
  const secondary = await startRawUpstream(async (res) => {
    sseHead(res);
    res.write(chunk('dear', { role: 'assistant', content: '' }));
    await writeWords(res, 'dear', WORDS.slice(2));
    res.write(chunk('dear', {}, 'stop'));
    res.write(usageChunk('dear', CONTINUATION.prompt, CONTINUATION.completion));
    res.end('data: [DONE]\n\n');
  });
  closers.push(() => secondary.close());
  const gw = await startGateway({
    resilience: { maxRetries: 0, streamResume },
    providers: [
      { id: 'a', type: 'openai', baseUrl: primary.url },
      { id: 'b', type: 'openai', baseUrl: secondary.url },
    ],
    models: [
      { name: 'chat', deployments: [{ provider: 'a', model: 'cheap', price: PRICE.cheap }], fallbacks: ['backup'] },
      { name: 'backup', deployments: [{ provider: 'b', model: 'dear', capabilities: ['prefill'], price: PRICE.dear }] },
    ],
  });
  closers.push(() => gw.close(0));
  return gw;
}

async function streamOnce(gw: TestGateway): Promise<{ body: string; id: string }> {
  client = seenText();
  const r = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'count' }] }),
  });
  return { body: await client.readAll(r), id: r.headers.get('x-request-id')! };
}

const scrape = async (gw: TestGateway): Promise<Exposition> => parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
const tokens = (exp: Exposition, deployment: string, direction: 'in' | 'out') => sampleValue(exp, 'switchyard_tokens_total', { deployment, direction });
const cost = (exp: Exposition, deployment: string) => sampleValue(exp, 'switchyard_cost_usd_total', { deployment });

it('a stream resumed on another deployment credits each attempt to the deployment that produced it', async () => {
  const gw = await setup(true);
  const { body, id } = await streamOnce(gw);
  expect(body).toContain('four.');
  expect(body).not.toContain('stream_broken');
  const t = await traceOf(gw, id);
  expect(t.streamOutcome).toBe('resumed');
  expect(t.deployment).toBe('b/dear');
  // The cut attempt reported no usage: its share is what the gateway counted, the totals less the continuation's.
  const first = { prompt: t.usage.promptTokens - CONTINUATION.prompt, completion: t.usage.completionTokens - CONTINUATION.completion };
  expect(first.prompt).toBeGreaterThan(0);
  expect(first.completion).toBeGreaterThan(0);

  const exp = await scrape(gw);
  expect(tokens(exp, 'a/cheap', 'in')).toBe(first.prompt);
  expect(tokens(exp, 'a/cheap', 'out')).toBe(first.completion);
  expect(tokens(exp, 'b/dear', 'in')).toBe(CONTINUATION.prompt);
  expect(tokens(exp, 'b/dear', 'out')).toBe(CONTINUATION.completion);
  expect(cost(exp, 'a/cheap')).toBeCloseTo((first.prompt * PRICE.cheap.input + first.completion * PRICE.cheap.output) / 1e6, 12);
  expect(cost(exp, 'b/dear')).toBeCloseTo((CONTINUATION.prompt * PRICE.dear.input + CONTINUATION.completion * PRICE.dear.output) / 1e6, 12);
  // Nothing counted twice: the metrics add up to the trace.
  expect(cost(exp, 'a/cheap')! + cost(exp, 'b/dear')!).toBeCloseTo(t.costUsd!, 12);
});

it('a stream cut without a resume credits the tokens it used to its one deployment', async () => {
  const gw = await setup(false);
  const { body, id } = await streamOnce(gw);
  expect(body).toContain('stream_broken');
  const t = await traceOf(gw, id);
  expect(t.streamOutcome).toBe('broken');
  expect(t.usage.completionTokens).toBeGreaterThan(0);

  const exp = await scrape(gw);
  expect(tokens(exp, 'a/cheap', 'in')).toBe(t.usage.promptTokens);
  expect(tokens(exp, 'a/cheap', 'out')).toBe(t.usage.completionTokens);
  expect(cost(exp, 'a/cheap')).toBeCloseTo(t.costUsd!, 12);
  expect(tokens(exp, 'b/dear', 'in')).toBe(0);
  expect(cost(exp, 'b/dear')).toBe(0);
});
