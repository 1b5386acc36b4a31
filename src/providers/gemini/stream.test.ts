import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';
import { GeminiChunkStream } from './stream.js';

const events = (name: string): unknown[] => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as unknown[];

/** Gemini's framing (`data: …\r\n\r\n`), delivered in arbitrary small pieces as a socket would. */
function sse(list: unknown[]): string {
  return list.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\r\n\r\n`).join('');
}
async function* pieces(text: string, size = 7): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

function stream(text: string, size?: number, choices?: number): GeminiChunkStream {
  let n = 0;
  const newToolId = () => `call_${n++}`; // numbered here so expectations can name them; the adapter's are random
  return new GeminiChunkStream({}, pieces(text, size), { model: 'asked', requestId: 'req-9', clock: new VirtualClock(1_700_000_000_500), newToolId, choices });
}

async function collect(s: GeminiChunkStream): Promise<{ chunks: ChatCompletionChunk[]; error?: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const c of s) chunks.push(c);
    return { chunks };
  } catch (error) {
    return { chunks, error };
  }
}

describe('GeminiChunkStream (fixtures in Gemini wire format)', () => {
  it('text: role first, one delta per event, finish, then a usage-only chunk', async () => {
    for (const size of [1, 7, 4096]) {
      const { chunks, error } = await collect(stream(sse(events('stream-text.json')), size));
      expect(error).toBeUndefined();
      expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason ?? null])).toEqual([
        [{ role: 'assistant', content: '', refusal: null }, null],
        [{ content: 'The' }, null],
        [{ content: ' quick brown fox jumps over' }, null],
        [{ content: ' the lazy dog.\n' }, null],
        [{}, 'stop'],
        [undefined, null],
      ]);
      const last = chunks.at(-1)!;
      expect(last.choices).toEqual([]);
      expect(last.usage).toEqual({ prompt_tokens: 6, completion_tokens: 10, total_tokens: 16 });
      for (const c of chunks) {
        // OpenAI's chunk shape, which typed clients decode: the fingerprint and each choice's logprobs present, as null.
        expect(c).toMatchObject({
          id: 'chatcmpl-1tNraKX3E6CHnvgPnMO34Ag',
          object: 'chat.completion.chunk',
          created: 1_700_000_000,
          model: 'gemini-2.0-flash',
          system_fingerprint: null,
        });
        for (const choice of c.choices) expect(choice).toHaveProperty('logprobs', null);
      }
    }
  });

  it('function call: a complete tool_call delta, finish tool_calls, usage with thinking tokens', async () => {
    const { chunks, error } = await collect(stream(sse(events('stream-function-call.json'))));
    expect(error).toBeUndefined();
    expect(chunks.map((c) => c.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '', refusal: null },
      { content: 'Let me check the weather for you.' },
      {
        tool_calls: [
          {
            index: 0,
            id: 'call_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Boston","unit":"celsius"}' },
            extra_content: { google: { thought_signature: 'CiIB0e2Kb2mS0hT4X6yQ1n0zQ3c8YkQ2Vd6kq9w1x8a7LTo=' } },
          },
        ],
      },
      {},
      undefined,
    ]);
    expect(chunks[3]!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks[4]!.usage).toEqual({ prompt_tokens: 57, completion_tokens: 89, total_tokens: 146, completion_tokens_details: { reasoning_tokens: 62 } });
  });

  it('a body that ends without a finishReason is a cut: network error after what did arrive', async () => {
    const { chunks, error } = await collect(stream(sse(events('stream-text.json').slice(0, 2))));
    expect(chunks.map((c) => c.choices[0]?.delta.content)).toEqual(['', 'The', ' quick brown fox jumps over']);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).category).toBe('network');
  });

  it('an empty body is a cut too', async () => {
    const { chunks, error } = await collect(stream(''));
    expect(chunks).toEqual([]);
    expect((error as UpstreamError).category).toBe('network');
  });

  it('skips and counts malformed events', async () => {
    const list = events('stream-text.json');
    const s = stream(sse([list[0], '{not json', '"a string"', list[1], list[2]]));
    const { chunks, error } = await collect(s);
    expect(error).toBeUndefined();
    expect(s.malformed).toBe(2);
    expect(chunks.filter((c) => c.choices[0]?.delta.content).map((c) => c.choices[0]!.delta.content)).toEqual([
      'The',
      ' quick brown fox jumps over',
      ' the lazy dog.\n',
    ]);
  });

  it('an error event mid-stream throws the classified error', async () => {
    const list = events('stream-text.json');
    const failure = {
      error: {
        code: 429,
        message: 'Resource has been exhausted (e.g. check quota).',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' }],
      },
    };
    const { chunks, error } = await collect(stream(sse([list[0], failure])));
    expect(chunks).toHaveLength(2);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ category: 'rate_limited', retryAfterMs: 12_000, providerCode: 'RESOURCE_EXHAUSTED' });
    // The 200's headers go with it, to teach the pacer as any answer's do.
    const headers = { 'x-ratelimit-remaining-requests': '0' };
    const withHeaders = new GeminiChunkStream(headers, pieces(sse([failure])), { model: 'asked', requestId: 'req-9', clock: new VirtualClock(0), newToolId: () => 'call_0' });
    expect((await collect(withHeaders)).error).toMatchObject({ category: 'rate_limited', headers });
  });

  it('a blocked prompt ends normally with an empty content_filter choice', async () => {
    const blocked = { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } };
    const { chunks, error } = await collect(stream(sse([blocked])));
    expect(error).toBeUndefined();
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason])).toEqual([
      [{ role: 'assistant', content: '', refusal: null }, null],
      [{}, 'content_filter'],
      [undefined, undefined],
    ]);
    expect(chunks[2]!.usage).toEqual({ prompt_tokens: 8, completion_tokens: 0, total_tokens: 8 });
    expect(chunks[0]!.model).toBe('asked');
    expect(chunks[0]!.id).toBe('chatcmpl-req-9');
  });

  it('with several candidates, finishes only when every one has', async () => {
    const frame = (index: number, text: string, finishReason?: string) => ({
      candidates: [{ index, content: { role: 'model', parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }],
    });
    const open = await collect(stream(sse([frame(0, 'a'), frame(1, 'b'), frame(0, '!', 'STOP')])));
    expect((open.error as UpstreamError).category).toBe('network');
    const done = await collect(stream(sse([frame(0, 'a'), frame(1, 'b'), frame(0, '!', 'STOP'), frame(1, '?', 'MAX_TOKENS')])));
    expect(done.error).toBeUndefined();
    expect(done.chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => [c.choices[0]!.index, c.choices[0]!.finish_reason])).toEqual([
      [0, 'stop'],
      [1, 'length'],
    ]);
  });

  // A committed stream's stall timer restarts on chunks that move the answer on (live-stream.ts):
  // Gemini's events with nothing in them must not become chunks that look like progress.
  it('events that carry nothing (an empty text or thought, usage alone, no candidates) yield no chunk', async () => {
    const text = (t: string, part: Record<string, unknown> = {}, end: Record<string, unknown> = {}) => ({
      candidates: [{ index: 0, content: { role: 'model', parts: [{ text: t, ...part }] }, ...end }],
    });
    const nothing = [text(''), text('', { thought: true }), { usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } }, { candidates: [] }, { candidates: [{ index: 0 }] }];
    const { chunks, error } = await collect(stream(sse([text('Hi'), ...nothing, ...nothing, text('!', {}, { finishReason: 'STOP' })])));
    expect(error).toBeUndefined();
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason ?? null])).toEqual([
      [{ role: 'assistant', content: '', refusal: null }, null],
      [{ content: 'Hi' }, null],
      [{ content: '!' }, null],
      [{}, 'stop'],
      [undefined, null],
    ]);
  });

  it('thought summaries (includeThoughts) are reasoning_content, never content, and no answer', async () => {
    const part = (p: Record<string, unknown>, end: Record<string, unknown> = {}) => ({ candidates: [{ index: 0, content: { role: 'model', parts: [p] }, ...end }] });
    const both = { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'then ', thought: true }, { text: 'Hi' }] } }] };
    const { chunks, error } = await collect(stream(sse([part({ text: 'First, ', thought: true }), both, part({ text: '!' }, { finishReason: 'STOP' })])));
    expect(error).toBeUndefined();
    expect(chunks.map((c) => [c.choices[0]?.delta, c.choices[0]?.finish_reason ?? null])).toEqual([
      [{ role: 'assistant', content: '', refusal: null }, null],
      [{ reasoning_content: 'First, ' }, null],
      [{ reasoning_content: 'then ' }, null],
      [{ content: 'Hi' }, null],
      [{ content: '!' }, null],
      [{}, 'stop'],
    ]);
    // Thoughts alone, then an end that is no answer: still no answer, the attempt fails (and fails over).
    const thoughtsOnly = await collect(stream(sse([part({ text: 'hmm', thought: true }), part({ text: '', thought: true }, { finishReason: 'MALFORMED_FUNCTION_CALL' })])));
    expect(thoughtsOnly.error).toBeInstanceOf(UpstreamError);
    expect(thoughtsOnly.chunks.some((c) => c.choices.some((ch) => ch.finish_reason))).toBe(false);
  });

  describe('a candidate that ends empty for a reason that is no answer', () => {
    const frame = (index: number, text: string | undefined, finishReason?: string) => ({
      candidates: [{ index, ...(text !== undefined ? { content: { role: 'model', parts: [{ text }] } } : {}), ...(finishReason ? { finishReason } : {}) }],
    });
    /** The finishes the client would read, by choice. */
    const finishes = (chunks: ChatCompletionChunk[]) => chunks.flatMap((c) => c.choices.filter((ch) => ch.finish_reason).map((ch) => [ch.index, ch.finish_reason]));
    const usage = { usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } };

    it.each(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS', 'OTHER', 'LANGUAGE', 'FINISH_REASON_UNSPECIFIED'])(
      '%s before any content: server error, nothing yielded before it (a finish is the commit point)',
      async (reason) => {
        const { chunks, error } = await collect(stream(sse([{ ...frame(0, undefined, reason), ...usage }])));
        expect(error).toBeInstanceOf(UpstreamError);
        expect(error).toMatchObject({ category: 'server', providerCode: reason });
        expect(chunks).toEqual([]);
      },
    );

    it('MISSING_THOUGHT_SIGNATURE before any content: the request\'s fault, invalid_request, nothing yielded', async () => {
      const { chunks, error } = await collect(stream(sse([{ ...frame(0, undefined, 'MISSING_THOUGHT_SIGNATURE'), ...usage }])));
      expect(error).toMatchObject({ category: 'invalid_request', providerCode: 'MISSING_THOUGHT_SIGNATURE' });
      expect(chunks).toEqual([]);
    });

    it('after its first token the text stays and the reason ends it as stop', async () => {
      const { chunks, error } = await collect(stream(sse([frame(0, 'Let me check'), frame(0, undefined, 'MALFORMED_FUNCTION_CALL')])));
      expect(error).toBeUndefined();
      expect(chunks.map((c) => c.choices[0]?.delta.content).join('')).toBe('Let me check');
      expect(finishes(chunks)).toEqual([[0, 'stop']]);
      // Before it, the same end fails the stream: the case above and this one differ in the text alone.
      expect((await collect(stream(sse([frame(0, undefined, 'MALFORMED_FUNCTION_CALL')])))).error).toMatchObject({ category: 'server' });
    });

    it('with n = 2, fails only when both end so; at the second end, not the body\'s', async () => {
      const both = await collect(stream(sse([frame(0, undefined, 'MALFORMED_FUNCTION_CALL'), frame(1, undefined, 'OTHER'), frame(0, 'late')]), undefined, 2));
      expect(both.error).toMatchObject({ category: 'server', providerCode: 'MALFORMED_FUNCTION_CALL' });
      expect(finishes(both.chunks)).toEqual([]);
      // Fewer candidates than asked for, each ended so: the failure comes at the body's end.
      const one = await collect(stream(sse([frame(0, undefined, 'OTHER')]), undefined, 2));
      expect(one.error).toMatchObject({ category: 'server', providerCode: 'OTHER' });
    });

    it('with n = 2, one answer keeps both choices: the empty one\'s held finish follows as content_filter', async () => {
      const { chunks, error } = await collect(stream(sse([frame(0, undefined, 'MALFORMED_FUNCTION_CALL'), frame(1, 'B'), frame(1, '!', 'STOP')]), undefined, 2));
      expect(error).toBeUndefined();
      expect(chunks.map((c) => [c.choices[0]?.index, c.choices[0]?.delta.content, c.choices[0]?.finish_reason])).toEqual([
        [0, '', null],
        [1, '', null],
        [1, 'B', null],
        [0, undefined, 'content_filter'],
        [1, '!', null],
        [1, undefined, 'stop'],
      ]);
      // A sibling that ends so after the answer settled is not held, and ends the same way.
      const after = await collect(stream(sse([frame(1, 'B', 'STOP'), frame(0, undefined, 'OTHER')]), undefined, 2));
      expect(finishes(after.chunks)).toEqual([
        [1, 'stop'],
        [0, 'content_filter'],
      ]);
      // An empty end that is an answer (STOP) settles it too.
      const stopped = await collect(stream(sse([frame(0, undefined, 'MALFORMED_FUNCTION_CALL'), frame(1, undefined, 'STOP')]), undefined, 2));
      expect(stopped.error).toBeUndefined();
      expect(finishes(stopped.chunks)).toEqual([
        [0, 'content_filter'],
        [1, 'stop'],
      ]);
    });
  });
});
