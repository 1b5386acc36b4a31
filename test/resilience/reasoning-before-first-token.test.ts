/**
 * A model that streams its thinking before its answer (reasoning_content deltas) has started
 * answering: the first-token limit no longer applies to it, a pause in its thinking does. It
 * was failed over at ttftTimeoutMs however steadily it thought, and every candidate's
 * thinking was thrown away the same way. Real loopback upstream; the gateway's timers on a
 * virtual clock, moved on while the upstream writes.
 */
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { closeAfterEach, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { chunk, sleep, sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const TTFT_MS = 300;
const IDLE_MS = 500;
const STEP_MS = 100;

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream], () => (gw = upstream = undefined));

const event = (delta: Record<string, unknown>, finish: string | null = null): string => chunk('m', delta, finish);

/** The gateway (virtual clock) over an upstream whose writes the test makes; the client's stream request, in flight. */
async function start(timeouts: { ttftTimeoutMs: number; idleTimeoutMs: number } = { ttftTimeoutMs: TTFT_MS, idleTimeoutMs: IDLE_MS }) {
  let res: ServerResponse | undefined;
  upstream = await startRawUpstream((r) => {
    res = r;
    sseHead(r);
    r.write(event({ role: 'assistant', content: '' }));
  });
  const clock = new VirtualClock();
  gw = await startChatOver(upstream.url, { resilience: { ...timeouts, maxRetries: 0, streamResume: false } }, {}, { clock });
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
  const answer = client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'think' }] }).withResponse();
  answer.catch(() => {});
  await upstream.hit(1); // its handler has run: `res` is the response to write to
  /** Writes, lets the gateway read it over the socket, then moves its clock on. */
  const step = async (s: string, ms = STEP_MS) => {
    if (!res!.destroyed) res!.write(s);
    await sleep(5);
    await clock.advance(ms);
  };
  return { answer, step, end: (s: string) => res!.end(s) };
}

/** What ended the request's one attempt, as its trace says. */
async function attemptMessage(err: unknown): Promise<string | undefined> {
  expect(err).toBeInstanceOf(OpenAI.APIError);
  const id = (err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-request-id');
  await expect.poll(() => gw!.observability.traces.get(id!)).toBeDefined();
  const attempts = gw!.observability.traces.get(id!)!.attempts;
  expect(attempts.map((a) => a.errorType)).toEqual(['timeout']);
  return attempts[0]!.message;
}

it('reasoning for longer than ttftTimeoutMs, a chunk every 100 ms, is not failed over: the answer comes', async () => {
  const s = await start();
  // One second of thinking: over three times the first-token limit.
  for (let i = 0; i < 10; i++) await s.step(event({ content: null, reasoning_content: `step ${i}. ` }));
  s.end(event({ content: 'Forty-two.' }) + event({}, 'stop') + 'data: [DONE]\n\n');
  const { data } = await s.answer;
  let text = '';
  let reasoning = '';
  for await (const c of data) {
    text += c.choices[0]?.delta.content ?? '';
    reasoning += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
  }
  expect(text).toBe('Forty-two.');
  expect(reasoning).toBe(Array.from({ length: 10 }, (_, i) => `step ${i}. `).join(''));
  expect(upstream!.hits).toHaveLength(1);
});

it('thinking that stops fails the attempt idleTimeoutMs after its last reasoning, as a stall', async () => {
  const s = await start();
  for (let i = 0; i < 3; i++) await s.step(event({ reasoning_content: 'hmm ' }));
  // Silence from t=200: the first-token limit passes at 300, and the stall limit ends it at 700, not before.
  let failed = false;
  s.answer.catch(() => (failed = true));
  await s.step('', IDLE_MS - STEP_MS - 1);
  await sleep(5);
  expect(failed).toBe(false);
  await s.step('', 1);
  const err = await s.answer.then(() => undefined, (e: unknown) => e);
  expect(await attemptMessage(err)).toBe('timeout (idle)');
});

it('chunks without reasoning do not stand in for it: the first-token limit still applies to them', async () => {
  const s = await start();
  for (let i = 0; i < 4; i++) await s.step(event({ content: '' }));
  const err = await s.answer.then(() => undefined, (e: unknown) => e);
  expect(await attemptMessage(err)).toBe('timeout (ttft)');
});

it('reasoning never brings the first-token limit nearer: with idleTimeoutMs below it, an answer after one early thought within ttftTimeoutMs still comes', async () => {
  // ttft 300, idle 100: one thought at once, then silence until the answer at 250 — within the first-token limit.
  const s = await start({ ttftTimeoutMs: 300, idleTimeoutMs: 100 });
  await s.step(event({ reasoning_content: 'hmm ' }), 50);
  await s.step('', 50);
  await s.step('', 50);
  await s.step('', 50);
  await s.step('', 50);
  s.end(event({ content: 'Forty-two.' }) + event({}, 'stop') + 'data: [DONE]\n\n');
  const { data } = await s.answer;
  let text = '';
  for await (const c of data) text += c.choices[0]?.delta.content ?? '';
  expect(text).toBe('Forty-two.');
});

it('with idleTimeoutMs below ttftTimeoutMs, reasoning still carries an attempt past the first-token limit, and silence in it still fails it', async () => {
  const s = await start({ ttftTimeoutMs: 300, idleTimeoutMs: 100 });
  // A thought every 50 ms up to t=450, past the first-token limit of 300.
  for (let i = 0; i < 10; i++) await s.step(event({ reasoning_content: `step ${i}. ` }), 50);
  let failed = false;
  s.answer.catch(() => (failed = true));
  await sleep(5);
  expect(failed).toBe(false);
  await s.step('', 100);
  const err = await s.answer.then(() => undefined, (e: unknown) => e);
  expect(await attemptMessage(err)).toBe('timeout (idle)');
});
