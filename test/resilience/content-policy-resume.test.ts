/**
 * A stream that moved to the alias's contentPolicyFallbacks (its first deployment
 * refused the prompt) and was then cut resumes among those fallbacks: it went back to
 * the chain the request started with, whose deployment had just refused this prompt,
 * while a fallback that could continue was never asked.
 */
import OpenAI from 'openai';
import { afterEach, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk, writeWords, type RawHandler } from '../helpers/raw-upstream.js';
import { seenText } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const WORDS = ['one ', 'two ', 'three ', 'four.'];
const refusal = JSON.stringify({ error: { message: 'Your request was rejected by our content_policy', type: 'invalid_request_error', code: 'content_policy_violation', param: null } });

const refuses: RawHandler = (res) => {
  res.writeHead(400, { 'content-type': 'application/json' });
  res.end(refusal);
};

/** The prefill the gateway sent (empty on a first call). */
const prefillOf = (body: Record<string, unknown>) => {
  const msgs = body.messages as { role: string; content: string }[];
  const last = msgs[msgs.length - 1]!;
  return last.role === 'assistant' ? last.content : '';
};

/** What the client has read: the cutter cuts once the client has every word it wrote, so after the commit. */
const shown = seenText();

/** One word more than it was given, then a cut. */
const cutsEveryTime: RawHandler = async (res, hit) => {
  const have = prefillOf(hit.body);
  const from = WORDS.findIndex((_, i) => WORDS.slice(0, i).join('') === have);
  sseHead(res);
  res.write(chunk('c-model', { role: 'assistant', content: '' }));
  const upTo = from + (have === '' ? 2 : 1);
  await writeWords(res, 'c-model', WORDS.slice(from, upTo));
  await shown.reached(WORDS.slice(0, upTo).join(''));
  res.destroy();
};

const continues: RawHandler = async (res, hit) => {
  const from = WORDS.findIndex((_, i) => WORDS.slice(0, i).join('') === prefillOf(hit.body));
  sseHead(res);
  res.write(chunk('k-model', { role: 'assistant', content: '' }));
  await writeWords(res, 'k-model', WORDS.slice(from));
  res.write(chunk('k-model', {}, 'stop'));
  res.write(usageChunk('k-model', 10, WORDS.length - from));
  res.end('data: [DONE]\n\n');
};

it('a cut stream served by a content-policy fallback resumes among the fallbacks, not on the refusing deployment', async () => {
  const strict = await startRawUpstream(refuses);
  const cutter = await startRawUpstream(cutsEveryTime);
  const keeper = await startRawUpstream(continues);
  closers.push(() => strict.close(), () => cutter.close(), () => keeper.close());
  const gw = await startGateway({
    resilience: { ttftTimeoutMs: 1000, idleTimeoutMs: 1000, requestTimeoutMs: 2000, maxRetries: 0 },
    providers: [
      { id: 'strict', type: 'openai', baseUrl: strict.url },
      { id: 'cutter', type: 'openai', baseUrl: cutter.url },
      { id: 'keeper', type: 'openai', baseUrl: keeper.url },
    ],
    models: [
      { name: 'chat', deployments: [{ provider: 'strict', model: 's-model', capabilities: ['prefill'] }], contentPolicyFallbacks: ['lenient'] },
      { name: 'lenient', deployments: [{ provider: 'cutter', model: 'c-model', capabilities: ['prefill'] }], fallbacks: ['spare'] },
      { name: 'spare', deployments: [{ provider: 'keeper', model: 'k-model', capabilities: ['prefill'] }] },
    ],
  });
  closers.push(() => gw.close(0));
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

  const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'count' }] });
  let text = '';
  for await (const c of stream) {
    text += c.choices[0]?.delta.content ?? '';
    shown.add(c.choices[0]?.delta.content ?? '');
  }
  shown.check();
  expect(text).toBe(WORDS.join(''));
  // Refused once, never asked again; the cut fallback resumed once on itself, then its own fallback finished.
  expect(strict.hits).toHaveLength(1);
  expect(cutter.hits).toHaveLength(2);
  expect(keeper.hits).toHaveLength(1);
});
