import { describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, ChunkChoice, ToolCallDelta } from '../protocol/openai.js';
import { firstToolCallOf, FirstToolCallStream, keepFirstToolCall, keepFirstToolCallChunk, oneToolCallAsked } from './first-tool-call.js';
import { nativeChoice, nativeChunk, roleDelta } from './native-chunk.js';
import { RAW_JSON, NO_HEADERS, type ChunkStream, type WithRaw } from './types.js';

const tools = [{ type: 'function' as const, function: { name: 'weather' } }];
const req = (extra: Partial<ChatRequest>): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools, ...extra });
const chunk = (...choices: ChunkChoice[]): WithRaw<ChatCompletionChunk> => nativeChunk('c', 1, 'm', choices);
const call = (index: number, args: string, name?: string): ToolCallDelta =>
  name === undefined ? { index, function: { arguments: args } } : { index, id: `id${index}`, type: 'function', function: { name, arguments: args } };

describe('oneToolCallAsked', () => {
  it('only parallel_tool_calls false with tools offered', () => {
    expect(oneToolCallAsked(req({ parallel_tool_calls: false }))).toBe(true);
    expect(oneToolCallAsked(req({ parallel_tool_calls: true }))).toBe(false);
    expect(oneToolCallAsked(req({}))).toBe(false);
    expect(oneToolCallAsked(req({ parallel_tool_calls: null }))).toBe(false);
    expect(oneToolCallAsked(req({ parallel_tool_calls: false, tools: [] }))).toBe(false);
  });
});

describe('keepFirstToolCall (buffered)', () => {
  it("keeps each choice's first call; finish_reason and usage as they were", () => {
    const calls = ['a', 'b', 'c'].map((n) => ({ id: n, type: 'function' as const, function: { name: n, arguments: '{}' } }));
    const usage = { prompt_tokens: 3, completion_tokens: 30, total_tokens: 33 };
    const res: ChatCompletion = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        { index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' },
        { index: 1, message: { role: 'assistant', content: 'just text' }, finish_reason: 'stop' },
      ],
      usage,
    };
    keepFirstToolCall(res);
    expect(res.choices[0]!.message.tool_calls!.map((c) => c.id)).toEqual(['a']);
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(res.choices[1]!.message).toEqual({ role: 'assistant', content: 'just text' });
    expect(res.usage).toEqual({ prompt_tokens: 3, completion_tokens: 30, total_tokens: 33 });
  });
});

describe('keepFirstToolCallChunk (streamed)', () => {
  it("drops a later call's pieces, in a chunk of its own or beside the first's", () => {
    const first: number[] = [];
    const both = chunk(nativeChoice(0, { tool_calls: [call(0, '{"a"', 'weather'), call(1, '{}', 'time')] }));
    both[RAW_JSON] = '{"stale":true}';
    expect(keepFirstToolCallChunk(both, first)).toBe(true);
    expect(both.choices[0]!.delta.tool_calls).toEqual([call(0, '{"a"', 'weather')]);
    expect(both[RAW_JSON]).toBeUndefined();

    const firstPiece = chunk(nativeChoice(0, { tool_calls: [call(0, ':1}')] }));
    expect(keepFirstToolCallChunk(firstPiece, first)).toBe(true);
    expect(firstPiece.choices[0]!.delta.tool_calls).toEqual([call(0, ':1}')]);

    expect(keepFirstToolCallChunk(chunk(nativeChoice(0, { tool_calls: [call(1, '{"x":')] })), first)).toBe(false);
  });

  it('lets through what is not a later call: role, text, the finish, usage', () => {
    const first: number[] = [];
    const kept = [
      chunk(nativeChoice(0, roleDelta())),
      chunk(nativeChoice(0, { content: 'Checking.' })),
      chunk(nativeChoice(0, {}, 'tool_calls')),
      { ...chunk(), usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
    ];
    for (const c of kept) expect(keepFirstToolCallChunk(c, first)).toBe(true);
    expect(kept.map((c) => c.choices.length)).toEqual([1, 1, 1, 0]);
  });

  it('tracks the first call per choice, and keeps a choice that has more to say', () => {
    const first: number[] = [];
    const c = chunk(
      nativeChoice(0, { tool_calls: [call(0, '{}', 'weather')] }),
      nativeChoice(1, { tool_calls: [call(0, '{}', 'time')] }),
    );
    expect(keepFirstToolCallChunk(c, first)).toBe(true);
    const later = chunk(
      nativeChoice(0, { tool_calls: [call(1, '{}', 'news')] }),
      nativeChoice(1, { tool_calls: [call(1, '{}', 'news')] }, 'tool_calls'),
    );
    expect(keepFirstToolCallChunk(later, first)).toBe(true);
    expect(later.choices).toEqual([nativeChoice(1, {}, 'tool_calls')]);
  });
});

function streamOf(chunks: ChatCompletionChunk[]): ChunkStream {
  return {
    headers: NO_HEADERS,
    malformed: 2,
    async *[Symbol.asyncIterator]() {
      yield* chunks;
    },
  };
}

describe('firstToolCallOf', () => {
  it('leaves the stream as it is unless one call was asked for', () => {
    const s = streamOf([]);
    expect(firstToolCallOf(req({}), s)).toBe(s);
    expect(firstToolCallOf(req({ parallel_tool_calls: true }), s)).toBe(s);
    expect(firstToolCallOf(req({ parallel_tool_calls: false }), s)).toBeInstanceOf(FirstToolCallStream);
  });

  it('yields the first call only, and the finish', async () => {
    const s = firstToolCallOf(
      req({ parallel_tool_calls: false }),
      streamOf([
        chunk(nativeChoice(0, roleDelta())),
        chunk(nativeChoice(0, { tool_calls: [call(0, '', 'weather')] })),
        chunk(nativeChoice(0, { tool_calls: [call(0, '{}')] })),
        chunk(nativeChoice(0, { tool_calls: [call(1, '', 'time')] })),
        chunk(nativeChoice(0, { tool_calls: [call(1, '{}')] })),
        chunk(nativeChoice(0, {}, 'tool_calls')),
      ]),
    );
    const out: ChatCompletionChunk[] = [];
    for await (const c of s) out.push(c);
    expect(out.map((c) => c.choices[0]!.delta.tool_calls?.[0]?.index ?? c.choices[0]!.finish_reason ?? 'role')).toEqual(['role', 0, 0, 'tool_calls']);
    expect(s.malformed).toBe(2);
  });
});
