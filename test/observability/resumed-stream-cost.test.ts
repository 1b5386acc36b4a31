/**
 * A stream cut on one deployment and continued on another (resume with prefill)
 * is priced attempt by attempt, each at its own deployment's price: the trace's
 * costUsd priced every token at the last one's.
 */
import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { assembleStream } from '../helpers/assemble-stream.js';
import { startGateway } from '../helpers/gateway.js';
import { chunk, sleep, sseHead, startRawUpstream, usageChunk, writeWords } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const WORDS = ['one ', 'two ', 'three ', 'four.'];
const CONTINUATION = { prompt: 40, completion: 2 };

it("a stream resumed on another deployment costs each attempt's tokens at that deployment's price", async () => {
  // Cheap, no prefill: cut after two words, reporting no usage (counted from the text).
  const primary = await startRawUpstream(async (res) => {
    sseHead(res);
    res.write(chunk('cheap', { role: 'assistant', content: '' }));
    await writeWords(res, 'cheap', WORDS.slice(0, 2));
    await sleep(20);
    res.destroy();
  });
  closers.push(() => primary.close());
  // Dear, prefill-capable: continues with the rest and reports its own usage.
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
    resilience: { maxRetries: 0 },
    providers: [
      { id: 'a', type: 'openai', baseUrl: primary.url },
      { id: 'b', type: 'openai', baseUrl: secondary.url },
    ],
    models: [
      { name: 'chat', deployments: [{ provider: 'a', model: 'cheap', price: { input: 1, output: 2 } }], fallbacks: ['backup'] },
      { name: 'backup', deployments: [{ provider: 'b', model: 'dear', capabilities: ['prefill'], price: { input: 30, output: 40 } }] },
    ],
  });
  closers.push(() => gw.close(0));
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

  const { data: stream, response } = await client.chat.completions
    .create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'count' }] })
    .withResponse();
  expect((await assembleStream(stream)).out.content).toBe(WORDS.join(''));
  expect(secondary.hits).toHaveLength(1);
  await sleep(10);
  const t = gw.observability.traces.get(response.headers.get('x-request-id')!)!;
  expect(t.streamOutcome).toBe('resumed');
  // The cut attempt's share: the totals less what the continuation reported.
  const first = { prompt: t.usage!.promptTokens - CONTINUATION.prompt, completion: t.usage!.completionTokens - CONTINUATION.completion };
  expect(first.prompt).toBeGreaterThan(0);
  expect(first.completion).toBeGreaterThan(0);
  const expected = (first.prompt * 1 + first.completion * 2 + CONTINUATION.prompt * 30 + CONTINUATION.completion * 40) / 1e6;
  expect(t.costUsd).toBeCloseTo(expected, 12);
});
