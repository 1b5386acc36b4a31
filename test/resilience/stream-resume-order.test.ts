/**
 * Where a broken stream is resumed: the same deployment first, but not again
 * and again once its own continuation broke too, while another prefill-capable
 * candidate of the chain is healthy and was never tried.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk, writeWords, type RawHandler } from '../helpers/raw-upstream.js';
import { seenText, traceOf } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const WORDS = ['one ', 'two ', 'three ', 'four ', 'five ', 'six.'];

/** Sends one more word than the prefill it was given holds, then cuts the connection. */
/** What the client has read: the cutter cuts once the client has all it wrote, so after the commit. */
const shown = seenText();

const cutsEveryTime: RawHandler = async (res, hit) => {
  const msgs = hit.body.messages as { role: string; content: string }[];
  const last = msgs[msgs.length - 1]!;
  const have = last.role === 'assistant' ? last.content : '';
  const next = WORDS.slice(0, 6).find((_, i) => WORDS.slice(0, i).join('') === have) ?? 'one ';
  sseHead(res);
  res.write(chunk('p-model', { role: 'assistant', content: '' }));
  await writeWords(res, 'p-model', have === '' ? WORDS.slice(0, 2) : [next]);
  await shown.reached(have === '' ? WORDS.slice(0, 2).join('') : have + next);
  res.destroy();
};

/** Continues the prefill it was given to the end. */
const continues: RawHandler = async (res, hit) => {
  const msgs = hit.body.messages as { role: string; content: string }[];
  const have = msgs[msgs.length - 1]!.content;
  const from = WORDS.findIndex((_, i) => WORDS.slice(0, i).join('') === have);
  sseHead(res);
  res.write(chunk('s-model', { role: 'assistant', content: '' }));
  await writeWords(res, 's-model', WORDS.slice(from));
  res.write(chunk('s-model', {}, 'stop'));
  res.write(usageChunk('s-model', 10, WORDS.length - from));
  res.end('data: [DONE]\n\n');
};

describe('stream resume order', () => {
  it('a deployment whose continuation broke too is passed over for a healthy prefill-capable fallback', async () => {
    const primary = await startRawUpstream(cutsEveryTime);
    closers.push(() => primary.close());
    const secondary = await startRawUpstream(continues);
    closers.push(() => secondary.close());
    const gw = await startGateway({
      resilience: { ttftTimeoutMs: 1000, idleTimeoutMs: 1000, requestTimeoutMs: 2000, maxRetries: 0 },
      providers: [
        { id: 'primary', type: 'openai', baseUrl: primary.url },
        { id: 'secondary', type: 'openai', baseUrl: secondary.url },
      ],
      models: [
        { name: 'chat', deployments: [{ provider: 'primary', model: 'p-model', capabilities: ['prefill'] }], fallbacks: ['backup'] },
        { name: 'backup', deployments: [{ provider: 'secondary', model: 's-model', capabilities: ['prefill'] }] },
      ],
    });
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

    const { data: stream, response } = await client.chat.completions
      .create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'count' }] })
      .withResponse();
    let text = '';
    let error: unknown;
    try {
      for await (const c of stream) {
        text += c.choices[0]?.delta.content ?? '';
        shown.add(c.choices[0]?.delta.content ?? '');
      }
    } catch (err) {
      error = err;
    }
    shown.check();
    expect(error).toBeUndefined();
    expect(text).toBe(WORDS.join(''));
    // The first resume goes to the same deployment; once that broke as well, the fallback continues.
    expect(primary.hits).toHaveLength(2);
    expect(secondary.hits).toHaveLength(1);
    const t = await traceOf(gw, response.headers.get('x-request-id'));
    expect(t.attempts.map((a) => [a.provider, a.errorType, a.resume ?? false])).toEqual([
      ['primary', 'network', false],
      ['primary', 'network', true],
      ['secondary', null, true],
    ]);
    expect(t.streamOutcome).toBe('resumed');
  });
});
