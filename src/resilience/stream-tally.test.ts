import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../protocol/openai.js';
import { RAW_JSON, type WithRaw } from '../providers/types.js';
import { StreamTally } from './stream-tally.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Partial<ChatCompletionChunk> = {}): WithRaw<ChatCompletionChunk> => {
  const c = { id: 'up-id', object: 'chat.completion.chunk', created: 5, model: 'm-up', choices: [{ index: 0, delta, finish_reason: finish }], ...extra } as WithRaw<ChatCompletionChunk>;
  c[RAW_JSON] = JSON.stringify(c);
  return c;
};
const usageOnly = (p: number, c: number) => chunk({}, null, { choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } });

describe('StreamTally', () => {
  it('passes chunks through, holds the usage-only chunk, and gives the upstream its own usage back when one attempt served all', () => {
    const t = new StreamTally('resp-id', 'm', 1, true);
    const a = chunk({ content: 'Hel' });
    expect(t.take(a)).toBe(a);
    expect(t.take(chunk({ content: 'lo' }, 'stop'))).toBeDefined();
    expect(t.finished).toBe(true);
    expect(t.complete).toBe(false);
    const u = usageOnly(7, 2);
    expect(t.take(u)).toBeUndefined();
    expect(t.complete).toBe(true);
    expect(t.closeAttempt(100)).toBe(9);
    expect(t.usageOut()).toBe(u);
    expect(t.usage()).toEqual({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 });
  });

  it('takes tool_calls that are not a list of objects (null entries, an object in place of the list) without throwing', () => {
    const t = new StreamTally('resp-id', 'm', 1, false);
    expect(() => t.take(chunk({ tool_calls: [null, 5, { index: 0, function: null }, { index: 1, function: { name: 'f', arguments: '{}' } }] }))).not.toThrow();
    expect(t.toolCalls).toBe(true);
    expect(() => t.take(chunk({ tool_calls: { length: 1 } }))).not.toThrow();
    expect(() => t.take(chunk({ tool_calls: 'abc' }))).not.toThrow();
    t.take(chunk({}, 'tool_calls'));
    // Only the well-formed call is counted: 'f' and '{}', 3 characters, one token.
    expect(t.closeAttempt(0)).toBe(1);
  });

  it('counts what the upstream reported only where it is a count: a string, a negative or a missing count is counted from the text', () => {
    const t = new StreamTally('resp-id', 'm', 1, false);
    t.take(chunk({ content: 'x'.repeat(40) })); // cut: continued below
    t.take(chunk({}, null, { choices: [], usage: { prompt_tokens: 'a', completion_tokens: -5 } as never }));
    expect(t.closeAttempt(30)).toBe(40);
    t.take(chunk({ content: 'y'.repeat(8) }));
    t.take(chunk({}, null, { choices: [], usage: 'lots' as never }));
    t.closeAttempt(30);
    t.take(chunk({ content: 'z'.repeat(4) }, 'stop'));
    t.take(chunk({}, null, { choices: [], usage: { prompt_tokens: 7 } as never }));
    t.closeAttempt(30);
    expect(t.usage()).toEqual({ prompt_tokens: 67, completion_tokens: 13, total_tokens: 80 });
  });

  it('counts reasoning (reasoning_content or reasoning) as generated tokens when the upstream reports no usage', () => {
    const t = new StreamTally('resp-id', 'm', 1, false);
    t.take(chunk({ reasoning_content: 'r'.repeat(40) }));
    t.take(chunk({ content: null, reasoning: 's'.repeat(20) }));
    t.take(chunk({ content: 'x'.repeat(8) }, 'stop'));
    // 40 + 20 + 8 characters, about four a token.
    expect(t.closeAttempt(10)).toBe(27);
    expect(t.usage()).toEqual({ prompt_tokens: 10, completion_tokens: 17, total_tokens: 27 });
  });

  it('a chunk naming no model (absent or null) leaves the last model the usage chunk it builds will carry', () => {
    const t = new StreamTally('resp-id', 'm-first', 1, false);
    t.take(chunk({ content: 'a' }, null, { model: 'm-up' }));
    t.take(chunk({ content: 'b' }, null, { model: null as unknown as string }));
    t.take(chunk({ content: 'c' }, 'stop', { model: undefined }));
    t.closeAttempt(10);
    expect(t.usageOut().model).toBe('m-up');
  });

  it('counts an attempt without usage from its text, and totals attempts; a continuation is relabelled and re-serialised', () => {
    const t = new StreamTally('resp-id', 'm', 1, true);
    t.take(chunk({ content: 'x'.repeat(40) }));
    expect(t.closeAttempt(100)).toBe(100 + 10);
    t.continuation = true;
    expect(t.take(chunk({ role: 'assistant', content: '' }))).toBeUndefined(); // nothing new: not sent again
    const c = chunk({ role: 'assistant', content: 'more' });
    const out = t.take(c)!;
    expect(out.id).toBe('resp-id');
    expect(out.choices[0]!.delta).toEqual({ content: 'more' });
    // Its raw text is the relabelled chunk's, not the upstream's.
    expect((out as WithRaw<ChatCompletionChunk>)[RAW_JSON]).toBe(JSON.stringify(out));
    t.take(usageOnly(3, 1));
    t.closeAttempt(100);
    expect(t.usageOut()).toMatchObject({ id: 'resp-id', choices: [], usage: { prompt_tokens: 103, completion_tokens: 11, total_tokens: 114 } });
  });

  it('a continuation without usage counts the delivered text in its prompt as text is weighed: non-ASCII above length / 4', () => {
    const t = new StreamTally('resp-id', 'm', 1, true);
    t.take(chunk({ content: '日本語のテキスト' })); // 8 units, 24 UTF-8 bytes
    t.closeAttempt(100);
    t.continuation = true;
    t.take(chunk({ content: '。' }));
    t.closeAttempt(100);
    // The continuation's prompt: 100 and the text delivered when it closes, 9 units and 27 bytes:
    // 9 / 4 + 18 × 0.75 = 15.75, so 16 (at length / 4 it was 3).
    expect(t.lastPrompt).toBe(100 + 16);
  });

  it('a continuation passes on nothing that is its attempt\'s alone: a chunk without choices or usage, the usage on a chunk with choices', () => {
    const t = new StreamTally('resp-id', 'm', 1, true);
    t.take(chunk({ content: 'Hel' }));
    t.closeAttempt(10);
    t.continuation = true;
    expect(t.take(chunk({}, null, { choices: [], prompt_filter_results: [] } as Partial<ChatCompletionChunk>))).toBeUndefined();
    const out = t.take(chunk({ content: 'lo' }, 'stop', { usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } }))!;
    expect(out.usage).toBeNull();
    t.closeAttempt(10);
    // Its usage still counts in the total.
    expect(t.usage()).toEqual({ prompt_tokens: 22, completion_tokens: 2, total_tokens: 24 });
  });

  it('keeps the delivered text exactly across many pieces, only for choice 0 and only when asked', () => {
    const t = new StreamTally('r', 'm', 1, true);
    const pieces = Array.from({ length: 300 }, (_, i) => `${i},`);
    for (const p of pieces) t.take(chunk({ content: p }));
    t.take({ ...chunk({}), choices: [{ index: 1, delta: { content: 'other choice' }, finish_reason: null }] });
    expect(t.delivered()).toBe(pieces.join(''));
    t.take(chunk({ content: 'tail' }));
    expect(t.delivered()).toBe(`${pieces.join('')}tail`);
    expect(t.deliveredChars).toBe(pieces.join('').length + 4);

    const off = new StreamTally('r', 'm', 1, false);
    off.take(chunk({ content: 'abc' }));
    expect(off.deliveredChars).toBe(0);
    expect(off.attemptChars).toBe(3);
  });

  it('keeps any text exactly: non-ASCII, and a surrogate pair split across two chunks', () => {
    const t = new StreamTally('r', 'm', 1, true);
    const pieces = ['héllo ', '日本語 ', '\ud83d', '\ude00', ' ok', ''.padEnd(1000, 'ß')];
    for (const p of pieces) t.take(chunk({ content: p }));
    expect(t.delivered()).toBe(pieces.join(''));
    expect(t.delivered()).toContain('😀');
    expect(t.deliveredChars).toBe(pieces.join('').length);
  });

  it('passes on a continuation\'s refusal, which is part of the answer like its content', () => {
    const t = new StreamTally('resp-id', 'm', 1, true);
    t.take(chunk({ content: 'Sure: ' }));
    t.closeAttempt(10);
    t.continuation = true;
    expect(t.take(chunk({ role: 'assistant', content: null, refusal: "I can't help with that." }))).toMatchObject({
      id: 'resp-id',
      choices: [{ delta: { content: null, refusal: "I can't help with that." } }],
    });
  });

  it('notes tool calls', () => {
    const t = new StreamTally('r', 'm', 1, true);
    t.take(chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] }));
    expect(t.toolCalls).toBe(true);
  });

  // Missed, a stream cut inside a legacy call was resumed as text, and one without usage counted none of it.
  it('notes a legacy function_call as a tool call, and counts its name and arguments', () => {
    const t = new StreamTally('r', 'm', 1, true);
    t.take(chunk({ role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '' } }));
    expect(t.toolCalls).toBe(true);
    t.take(chunk({ function_call: { arguments: '{"city":"Paris"}' } }));
    t.take(chunk({}, 'function_call'));
    // 'get_weather' and '{"city":"Paris"}': 27 characters, 7 tokens.
    expect(t.closeAttempt(0)).toBe(7);
  });

  it('a continuation passes on a legacy function_call, which is part of the answer like its content', () => {
    const t = new StreamTally('resp-id', 'm', 1, true);
    t.take(chunk({ content: 'Let me check. ' }));
    t.closeAttempt(10);
    t.continuation = true;
    expect(t.take(chunk({ function_call: { name: 'f', arguments: '{}' } }))).toMatchObject({ id: 'resp-id', choices: [{ delta: { function_call: { name: 'f' } } }] });
  });

  // The stall timer restarts only on these (live-stream.ts): chunks that carry nothing kept a stream open for ever.
  it('notes which chunks moved the answer on: text, refusal, reasoning, a call, a finish, usage; not an empty delta, an empty text or a role', () => {
    const progressed = (c: WithRaw<ChatCompletionChunk>, t = new StreamTally('r', 'm', 1, false)): boolean => (t.take(c), t.progressed);
    expect(progressed(chunk({ content: 'a' }))).toBe(true);
    expect(progressed(chunk({ refusal: 'no' }))).toBe(true);
    expect(progressed(chunk({ content: null, reasoning_content: 'hm' }))).toBe(true);
    expect(progressed(chunk({ reasoning: 'hm' }))).toBe(true);
    expect(progressed(chunk({ tool_calls: [{ index: 0, function: { arguments: '{' } }] }))).toBe(true);
    expect(progressed(chunk({ function_call: { arguments: '{' } }))).toBe(true);
    expect(progressed(chunk({}, 'stop'))).toBe(true);
    expect(progressed(usageOnly(1, 1))).toBe(true);
    expect(progressed(chunk({}, null, { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }))).toBe(true);

    expect(progressed(chunk({}))).toBe(false);
    expect(progressed(chunk({ content: '' }))).toBe(false);
    expect(progressed(chunk({ role: 'assistant', content: '', refusal: null }))).toBe(false);
    expect(progressed(chunk({ content: null, reasoning_content: '', tool_calls: [] }))).toBe(false);
    expect(progressed(chunk({}, null, { choices: [], prompt_filter_results: [] }))).toBe(false);
    // After the finish, whatever comes for the answer is dropped, and is no progress either.
    const t = new StreamTally('r', 'm', 1, false);
    t.take(chunk({ content: 'a' }, 'stop'));
    expect(progressed(chunk({ content: 'late' }), t)).toBe(false);
    // With n > 1, any choice's progress counts.
    const two = (a: Record<string, unknown>, b: Record<string, unknown>) => chunk({}, null, { choices: [{ index: 0, delta: a, finish_reason: null }, { index: 1, delta: b, finish_reason: null }] });
    expect(progressed(two({ reasoning_content: 'hm' }, {}), new StreamTally('r', 'm', 1, false, 2))).toBe(true);
    expect(progressed(two({}, { content: 'b' }), new StreamTally('r', 'm', 1, false, 2))).toBe(true);
    expect(progressed(two({}, { content: '' }), new StreamTally('r', 'm', 1, false, 2))).toBe(false);
    // Each chunk is judged on its own: the flag does not stick.
    const u = new StreamTally('r', 'm', 1, false);
    expect(progressed(chunk({ content: 'a' }), u)).toBe(true);
    expect(progressed(chunk({}), u)).toBe(false);
  });

  it('text a continuation holds back at a stop sequence\'s seam is progress, though nothing goes out yet', () => {
    const t = new StreamTally('r', 'm', 1, true);
    t.take(chunk({ content: 'The end is E' }));
    t.closeAttempt(1);
    t.continueAnswer(['END']);
    expect(t.take(chunk({ content: 'N' }))).toBeUndefined();
    expect(t.progressed).toBe(true);
  });
});

describe('StreamTally, a chunk it cannot relay', () => {
  const deep = () => JSON.parse('['.repeat(20_000) + ']'.repeat(20_000)) as unknown;
  it('usage beside a finish, with a member nested too deep to serialise: the attempt fails as the upstream\'s, and neither its finish nor its text counts', () => {
    const t = new StreamTally('resp-id', 'm', 1, true);
    t.take(chunk({ content: 'Hello' }));
    const delta: Record<string, unknown> = { content: ' world' };
    const c = chunk(delta, 'stop');
    delta.x = deep(); // as JSON.parse makes it from the upstream's text
    c.usage = { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 };
    expect(() => t.take(c)).toThrow(/too deeply nested/);
    expect(t.finished).toBe(false);
    expect(t.delivered()).toBe('Hello');
  });
});
