/**
 * An upstream that reports usage on its finish chunk, beside the choices (vLLM and
 * other OpenAI-compatible servers do), rather than on a usage-only chunk of its own.
 * The gateway answers usage its own way (the usage-only chunk at the end, summing
 * every attempt), so the client reads the upstream's stream as OpenAI's would be:
 * exactly one usage chunk when it asked with `stream_options.include_usage`, none
 * when it did not. Read as the SSE text over a real socket: each event counted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, type RawHandler } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const USAGE = { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 };

/** Content, then the finish chunk carrying the usage, then `[DONE]`. */
const usageOnFinish: RawHandler = (res) => {
  sseHead(res);
  res.write(chunk('m', { role: 'assistant', content: '' }));
  res.write(chunk('m', { content: 'Hello ' }));
  res.write(chunk('m', { content: 'there.' }));
  res.write(chunk('m', {}, 'stop', USAGE));
  res.end('data: [DONE]\n\n');
};

/** The whole answer in one chunk, finish and usage included: the commit point's chunk is the last. */
const allInOne: RawHandler = (res) => {
  sseHead(res);
  res.write(chunk('m', { role: 'assistant', content: 'Hello there.' }, 'stop', USAGE));
  res.end('data: [DONE]\n\n');
};

interface Event {
  choices: { delta: { content?: string | null }; finish_reason: string | null }[];
  usage?: unknown;
}

/** The gateway's SSE events for one streamed request, parsed, `[DONE]` last. */
async function events(handler: RawHandler, includeUsage: boolean | undefined): Promise<{ events: Event[]; done: boolean }> {
  const upstream = await startRawUpstream(handler);
  closers.push(() => upstream.close());
  const gw = await startChatOver(upstream.url);
  closers.push(() => gw.close(0));
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
      ...(includeUsage === undefined ? {} : { stream_options: { include_usage: includeUsage } }),
    }),
  });
  expect(res.status).toBe(200);
  const data = (await res.text())
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice('data: '.length));
  const done = data[data.length - 1] === '[DONE]';
  return { events: data.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Event), done };
}

const text = (evs: Event[]) => evs.map((e) => e.choices[0]?.delta.content ?? '').join('');
const withUsage = (evs: Event[]) => evs.filter((e) => e.usage != null);

describe('usage an upstream sends on its finish chunk', () => {
  for (const [shape, handler] of [
    ['after the content', usageOnFinish],
    ['on the only chunk', allInOne],
  ] as const) {
    it(`${shape}: with include_usage the client gets exactly one usage chunk, the last, with the upstream's counts`, async () => {
      const { events: evs, done } = await events(handler, true);
      expect(done).toBe(true);
      expect(text(evs)).toBe('Hello there.');
      expect(evs.some((e) => e.choices[0]?.finish_reason === 'stop')).toBe(true);
      const u = withUsage(evs);
      expect(u).toHaveLength(1);
      expect(u[0]).toBe(evs[evs.length - 1]);
      expect(u[0]!.choices).toEqual([]);
      expect(u[0]!.usage).toEqual(USAGE);
    });

    it(`${shape}: without include_usage (absent or false) the client gets no usage at all`, async () => {
      for (const asked of [undefined, false]) {
        const { events: evs, done } = await events(handler, asked);
        expect(done).toBe(true);
        expect(text(evs)).toBe('Hello there.');
        expect(evs[evs.length - 1]!.choices[0]?.finish_reason).toBe('stop');
        expect(withUsage(evs)).toEqual([]);
      }
    });
  }
});
