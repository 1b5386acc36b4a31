/**
 * ChunkTemplate: a content chunk built from a learnt one must be exactly what
 * JSON.parse makes of the same event (values, key order, raw text), and
 * anything it cannot build that way must be left to JSON.parse.
 */
import { describe, expect, it } from 'vitest';
import { RAW_JSON } from '../types.js';
import { ChunkTemplate } from './chunk-template.js';
import type { ChatCompletionChunk } from '../../protocol/openai.js';

const head = { id: 'chatcmpl-AbC123', object: 'chat.completion.chunk', created: 1764460800, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_44709d6fcb' };
const event = (content: unknown, extra: Record<string, unknown> = {}, choice: Record<string, unknown> = {}) =>
  JSON.stringify({ ...head, choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null, ...choice }], ...extra });
const learnt = (data = event(' first')) => ChunkTemplate.learn(JSON.parse(data) as ChatCompletionChunk, data)!;

describe('ChunkTemplate', () => {
  it('builds what JSON.parse makes of an event with other text, raw text included', () => {
    const t = learnt();
    for (const content of ['', ' word', 'héllo wörld', '日本語のテキスト', 'emoji 🙂 and 𝄞', "it's <b>&amp;</b> 100% {json} [array]", 'x'.repeat(5000)]) {
      const data = event(content);
      const built = t.build(data)!;
      expect(built, content).toStrictEqual({ ...JSON.parse(data), [RAW_JSON]: data });
      expect(JSON.stringify(built)).toBe(data); // the same members in the same order
      expect(built[RAW_JSON]).toBe(data);
    }
  });

  it('leaves to JSON.parse every event that differs elsewhere or needs unescaping', () => {
    const t = learnt();
    const others = [
      event('a\nb'), // escapes: the text is not the raw characters
      event('say "hi"'),
      event('C:\\path'),
      event('é', {}, {}).replace('é', '\\u00e9'),
      event('tab').replace('tab', 'a\tb'), // a raw control character: JSON.parse refuses it, so must the template
      JSON.stringify({ ...head, id: 'chatcmpl-other', choices: [{ index: 0, delta: { content: 'x' }, logprobs: null, finish_reason: null }] }),
      JSON.stringify({ ...head, model: 'gpt-4o', choices: [{ index: 0, delta: { content: 'x' }, logprobs: null, finish_reason: null }] }),
      event('x', {}, { finish_reason: 'stop' }),
      event('x', {}, { index: 1 }),
      event('x', { obfuscation: 'q1w2' }), // a per-event field after the choices
      JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: 'x' }, logprobs: null, finish_reason: null }] }),
      JSON.stringify({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{}' } }] }, logprobs: null, finish_reason: null }] }),
      JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
      JSON.stringify(JSON.parse(event('x')), null, 1),
      event('x').slice(0, -1), // truncated
      '',
    ];
    for (const data of others) expect(t.build(data), data).toBeUndefined();
  });

  it('learns only from a plain content chunk whose text it can find', () => {
    const refused = [
      JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] }),
      JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
      event(null),
      event('x', {}, { logprobs: { content: [{ token: 'x', logprob: -0.1 }] } }),
      event('x', { usage: { total_tokens: 1 } }),
      JSON.stringify({ ...head, choices: [{ index: 0, delta: { content: 'x' } }, { index: 1, delta: { content: 'y' } }] }),
      event('line\nbreak'),
      JSON.stringify(JSON.parse(event('x')), null, 2),
      event('x').replace('"id"', '"__proto__":"p","id"'), // an own __proto__ member: a copy would set the prototype instead
    ];
    for (const data of refused) expect(ChunkTemplate.learn(JSON.parse(data) as ChatCompletionChunk, data), data).toBeUndefined();
    // `"content":"` spelt by another member, while the delta's key is written otherwise or
    // repeated: swapping that other text would build the wrong chunk.
    const decoys = [
      '{"a\\"content":"zz","id":"x","choices":[{"index":0,"delta":{"content": "zz"}}]}',
      '{"a\\"content":"zz","id":"x","choices":[{"index":0,"delta":{"cont\\u0065nt":"zz"}}]}',
      '{"id":"x","choices":[{"index":0,"delta":{"content":"zz"},"delta":{"content": "zz"}}]}',
      '{"id":"x","usage":{"content":"zz"},"usage":null,"choices":[{"index":0,"delta":{"content": "zz"}}]}',
    ];
    for (const data of decoys) {
      expect(JSON.parse(data).choices[0].delta).toEqual({ content: 'zz' }); // the test's own JSON says what it should
      expect(ChunkTemplate.learn(JSON.parse(data) as ChatCompletionChunk, data), data).toBeUndefined();
    }
    // A string value that spells the key holds it escaped, so it cannot be mistaken for it.
    const tricky = event('x', { note: '"content":"' });
    expect(learnt(tricky).build(event('y', { note: '"content":"' }))).toStrictEqual({ ...JSON.parse(event('y', { note: '"content":"' })), [RAW_JSON]: event('y', { note: '"content":"' }) });
  });

  it("builds OpenAI's chunks too, whose last member (`obfuscation`) is other text each event", () => {
    const openai = (content: string, obfuscation: string) => event(content, { usage: null, obfuscation });
    const t = learnt(openai(' first', 'AbC123xY'));
    for (const [content, obfuscation] of [['Hello', 'q'], [' world', ''], ['', 'Zz9Zz9Zz9Zz9Zz9Zz9'], [' 🙂', 'x']]) {
      const data = openai(content, obfuscation);
      expect(t.build(data), data).toStrictEqual({ ...JSON.parse(data), [RAW_JSON]: data });
      expect(JSON.stringify(t.build(data))).toBe(data);
    }
    for (const data of [
      openai('x', 'has"quote'),
      openai('x', 'back\\slash'),
      openai('x"y', 'ok'),
      event('x', { usage: null }), // no last text at all
      event('x', { usage: null, obfuscation: 'q', extra: 'later' }), // another member after it
      event('x', { usage: { total_tokens: 1 }, obfuscation: 'q' }),
    ]) {
      expect(t.build(data), data).toBeUndefined();
    }
    // A repeated last member: JSON.parse keeps the last one's text at the first one's place.
    const twice = (a: string, b: string) => event('x').slice(0, -1) + `,"o":"${a}","o":"${b}"}`;
    const t2 = learnt(twice('a', 'a'));
    for (const data of [twice('a', 'b'), twice('c', 'b')]) {
      const built = t2.build(data);
      if (built !== undefined) expect(built).toStrictEqual({ ...JSON.parse(data), [RAW_JSON]: data });
    }
    expect(t2.build(twice('a', 'b'))).toBeDefined();
  });

  it('gives each chunk its own objects: a consumer changing one does not change the next', () => {
    const t = learnt();
    const first = t.build(event('one'))!;
    // What a resumed stream does to its chunks, and more.
    first.id = 'chatcmpl-relabelled';
    first.choices[0]!.delta.content = 'changed';
    (first.choices[0] as { index: number }).index = 7;
    first.choices.push(first.choices[0]!);
    delete first[RAW_JSON];
    const data = event('two');
    expect(t.build(data)).toStrictEqual({ ...JSON.parse(data), [RAW_JSON]: data });
  });
});
