/**
 * A JSON chat completion answered to a stream request, as the chunks of an
 * OpenAI stream: the pure conversion, the content-type check, and the stream
 * that hands the chunks out.
 */
import { describe, expect, it } from 'vitest';
import { PULL_END } from '../../core/iterator-pull.js';
import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { CompletionChunkStream, completionChunks, isJsonContentType } from './completion-stream.js';

const DEFAULTS = { model: 'asked-model', id: 'chatcmpl-req-1', created: 1_800_000_000 };
const USAGE: Usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };

function completion(choices: unknown[], extra: Record<string, unknown> = {}): ChatCompletion {
  return { id: 'chatcmpl-up-7', object: 'chat.completion', created: 1_700_000_123, model: 'served-1', choices, ...extra } as ChatCompletion;
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.map((c) => (c.choices.length === 0 ? { usage: c.usage } : { ...c.choices[0]!.delta, finish: c.choices[0]!.finish_reason }));

describe('isJsonContentType', () => {
  it('is application/json with or without parameters, in any case', () => {
    for (const t of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8', ' application/json ']) {
      expect(isJsonContentType(t), t).toBe(true);
    }
  });

  it('is not an event stream, another type, or none', () => {
    for (const t of [undefined, '', 'text/event-stream', 'text/event-stream; charset=utf-8', 'application/jsonl', 'application/x-ndjson', 'text/plain', 'text/html; charset=utf-8']) {
      expect(isJsonContentType(t), String(t)).toBe(false);
    }
  });
});

describe('completionChunks', () => {
  it('a text answer: role, content, finish, usage, each with the answer’s id, created, model and fingerprint', () => {
    const c = completion([{ index: 0, message: { role: 'assistant', content: 'Hello there.' }, finish_reason: 'length', logprobs: null }], {
      usage: { ...USAGE, completion_tokens_details: { reasoning_tokens: 0 } },
      system_fingerprint: 'fp_1',
    });
    const chunks = completionChunks(c, USAGE, DEFAULTS);
    expect(deltas(chunks)).toEqual([
      { role: 'assistant', content: '', finish: null },
      { content: 'Hello there.', finish: null },
      { finish: 'length' },
      { usage: { ...USAGE, completion_tokens_details: { reasoning_tokens: 0 } } },
    ]);
    for (const ch of chunks) {
      expect(ch).toMatchObject({ id: 'chatcmpl-up-7', object: 'chat.completion.chunk', created: 1_700_000_123, model: 'served-1', system_fingerprint: 'fp_1' });
    }
  });

  it('tool calls: one delta each, with its index, id, name and whole arguments; the finish says tool_calls', () => {
    const c = completion([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Lyon"}' } },
            { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ]);
    expect(deltas(completionChunks(c, null, DEFAULTS))).toEqual([
      { role: 'assistant', content: '', finish: null },
      { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Lyon"}' } }], finish: null },
      { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }], finish: null },
      { finish: 'tool_calls' },
    ]);
  });

  it('several choices: each its own chunks with its own index; a refusal is a refusal delta', () => {
    const c = completion([
      { index: 0, message: { role: 'assistant', content: 'A' }, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'stop' },
    ]);
    const chunks = completionChunks(c, USAGE, DEFAULTS);
    expect(chunks.map((ch) => ch.choices.map((x) => [x.index, x.delta, x.finish_reason]))).toEqual([
      [[0, { role: 'assistant', content: '' }, null]],
      [[0, { content: 'A' }, null]],
      [[0, {}, 'stop']],
      [[1, { role: 'assistant', content: '' }, null]],
      [[1, { refusal: 'No.' }, null]],
      [[1, {}, 'stop']],
      [],
    ]);
  });

  it('an answer lacking id, created, model or finish_reason: the attempt’s defaults, and the finish it would have had', () => {
    const c = { object: 'chat.completion', choices: [{ message: { content: 'ok' }, finish_reason: null }, { message: { tool_calls: [{ id: 'c1', function: { name: 'f' } }] } }] } as unknown as ChatCompletion;
    const chunks = completionChunks(c, null, DEFAULTS);
    for (const ch of chunks) expect(ch).toMatchObject({ id: 'chatcmpl-req-1', created: 1_800_000_000, model: 'asked-model' });
    expect(chunks.map((ch) => ch.choices[0]!.finish_reason).filter(Boolean)).toEqual(['stop', 'tool_calls']);
    expect(chunks.map((ch) => ch.choices[0]!.index)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(chunks[4]!.choices[0]!.delta.tool_calls).toEqual([{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }]);
  });

  it('no usage chunk when the answer has no counts', () => {
    const c = completion([{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }]);
    expect(completionChunks(c, null, DEFAULTS).some((ch) => ch.usage !== undefined)).toBe(false);
    const partial = { prompt_tokens: 3 } as unknown as Usage;
    expect(completionChunks(c, partial, DEFAULTS).some((ch) => ch.usage !== undefined)).toBe(false);
  });

  it('a choice or a tool call that is not an object is a malformed answer (server)', () => {
    for (const choices of [[null], [1], [{ index: 0, message: { tool_calls: ['x'] }, finish_reason: 'tool_calls' }]]) {
      const err = (() => {
        try {
          completionChunks(completion(choices), null, DEFAULTS);
        } catch (e) {
          return e;
        }
      })();
      expect(err, JSON.stringify(choices)).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).category).toBe('server');
    }
  });
});

describe('CompletionChunkStream', () => {
  const chunks = completionChunks(completion([{ index: 0, message: { content: 'hi' }, finish_reason: 'stop' }]), USAGE, DEFAULTS);

  it('pulls every chunk in order, then PULL_END, never waiting', async () => {
    const s = new CompletionChunkStream({}, chunks);
    const it = s[Symbol.asyncIterator]();
    expect(it).toBe(s);
    const got = [];
    for (let r = s.pull(); r !== PULL_END; r = s.pull()) got.push(r);
    expect(got).toEqual(chunks);
    expect(s.pull()).toBe(PULL_END);
    expect((await it.next()).done).toBe(true);
    expect(s.malformed).toBe(0);
  });

  it('iterates once; return ends it', async () => {
    const s = new CompletionChunkStream({}, chunks);
    const it = s[Symbol.asyncIterator]();
    expect(() => s[Symbol.asyncIterator]()).toThrow(/once/);
    expect((await it.next()).value).toBe(chunks[0]);
    await it.return!();
    expect((await it.next()).done).toBe(true);
  });
});
