/**
 * OpenAIChunkStream's pull iteration on a scripted body: what arrives in one
 * read is handed out in order, errors and cuts come after the chunks before them.
 */
import { describe, expect, it } from 'vitest';
import { TextSource, type UpstreamBody } from '../http.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { RAW_JSON } from '../types.js';
import { OpenAIChunkStream } from './stream.js';

/** A body fed by the test: `push` bytes, `end`, `fail`. */
class ScriptedBody implements UpstreamBody {
  streaming = false;
  ended = false;
  failure: unknown = undefined;
  abandoned = false;
  private pending: Buffer[] = [];
  private waiter: (() => void) | undefined;
  hasData() {
    return this.pending.length > 0;
  }
  takeAll() {
    const b = Buffer.concat(this.pending);
    this.pending = [];
    return b;
  }
  next() {
    return new Promise<void>((r) => (this.waiter = r));
  }
  onNext(wake: () => void) {
    this.waiter = wake;
  }
  abandon() {
    if (!this.ended) this.abandoned = true;
  }
  push(text: string) {
    this.pending.push(Buffer.from(text));
    this.wake();
  }
  end() {
    this.ended = true;
    this.wake();
  }
  private wake() {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

const ev = (content: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

function open() {
  const body = new ScriptedBody();
  const stream = new OpenAIChunkStream({}, new TextSource(body, (e) => (e instanceof Error ? e : new Error(String(e)))));
  return { body, it: stream[Symbol.asyncIterator](), stream };
}
const contents = (r: IteratorResult<{ choices: { delta: { content?: string | null } }[] }>) => (r.done ? 'DONE' : r.value.choices[0]!.delta.content);

describe('OpenAIChunkStream', () => {
  it('hands out every chunk of one read in order, then waits for more, then ends at [DONE]', async () => {
    const { body, it } = open();
    body.push(ev('a') + ev('b'));
    expect(contents(await it.next())).toBe('a');
    expect(contents(await it.next())).toBe('b');
    const third = it.next();
    body.push(ev('c', 'stop') + 'data: [DONE]\n\n');
    body.end();
    expect(contents(await third)).toBe('c');
    expect((await it.next()).done).toBe(true);
    expect(body.abandoned).toBe(false);
  });

  it('an error event after content: the content first, then the classified error', async () => {
    const { body, it } = open();
    body.push(ev('partial') + `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error', code: 503 } })}\n\n`);
    expect(contents(await it.next())).toBe('partial');
    const err = await it.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(body.abandoned).toBe(true);
  });

  it('a cut before any finish_reason: the chunks, then a network error; after a finish_reason a close is an end', async () => {
    const cut = open();
    cut.body.push(ev('x'));
    cut.body.end();
    expect(contents(await cut.it.next())).toBe('x');
    const err = await cut.it.next().catch((e: unknown) => e);
    expect((err as UpstreamError).category).toBe('network');

    const finished = open();
    finished.body.push(ev('y', 'stop'));
    finished.body.end();
    expect(contents(await finished.it.next())).toBe('y');
    expect((await finished.it.next()).done).toBe(true);
  });

  it('counts malformed events and skips them; return() releases the body', async () => {
    const { body, it, stream } = open();
    body.push('data: {not json\n\n' + 'data: 42\n\n' + ev('ok'));
    expect(contents(await it.next())).toBe('ok');
    expect(stream.malformed).toBe(2);
    await it.return!();
    expect(body.abandoned).toBe(true);
    expect((await it.next()).done).toBe(true);
  });

  it('hands out what JSON.parse makes of every event, however its chunks are built', async () => {
    // Content chunks alike but for their text are built from a template (chunk-template.ts); the rest are parsed.
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 5, model: 'm-1', system_fingerprint: 'fp' };
    const delta = (d: object, finish: string | null = null) => JSON.stringify({ ...base, choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }] });
    const datas = [
      delta({ role: 'assistant', content: '' }),
      delta({ content: 'Hello' }),
      delta({ content: ', wörld' }),
      delta({ content: 'line\nbreak "quoted"' }),
      delta({ content: ' 🙂' }),
      JSON.stringify({ ...base, model: 'm-2', choices: [{ index: 0, delta: { content: ' other model' }, logprobs: null, finish_reason: null }] }),
      delta({ content: ' back' }),
      delta({}, 'stop'),
      JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 } }),
    ];
    const { body, it } = open();
    body.push(datas.map((d) => `data: ${d}\n\n`).join('') + 'data: [DONE]\n\n');
    body.end();
    for (const data of datas) expect((await it.next()).value).toStrictEqual({ ...JSON.parse(data), [RAW_JSON]: data });
    expect((await it.next()).done).toBe(true);
  });

  it('stays exact when events change as they go: a clock in `created`, a last field of their own, an id each, spaced JSON', async () => {
    const chunk = (i: number, extra: object = {}) => ({ id: 'c', object: 'chat.completion.chunk', created: 100 + Math.floor(i / 3), model: 'm', choices: [{ index: 0, delta: { content: `t${i}` }, finish_reason: null }], ...extra });
    const streams = [
      Array.from({ length: 12 }, (_, i) => JSON.stringify(chunk(i))),
      Array.from({ length: 12 }, (_, i) => JSON.stringify(chunk(i, { obfuscation: 'x'.repeat(i % 5) }))),
      Array.from({ length: 12 }, (_, i) => JSON.stringify({ ...chunk(i), id: `c${i}` })), // a member before the text changing each event
      Array.from({ length: 12 }, (_, i) => JSON.stringify(chunk(i)).replace(/":/g, i % 2 ? '": ' : '":')),
    ];
    for (const datas of streams) {
      const { body, it } = open();
      body.push(datas.map((d) => `data: ${d}\n\n`).join('') + 'data: [DONE]\n\n');
      body.end();
      for (const data of datas) expect((await it.next()).value).toStrictEqual({ ...JSON.parse(data), [RAW_JSON]: data });
      expect((await it.next()).done).toBe(true);
    }
  });
});
