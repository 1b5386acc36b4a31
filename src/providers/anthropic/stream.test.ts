import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type { ChatCompletionChunk } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { AnthropicChunkStream } from './stream.js';

const CREATED = 1_700_000_000;

interface StreamFixture {
  sse: string;
  id: string;
  model: string;
  chunks: { delta: unknown; finish_reason: string | null }[];
  usage?: unknown;
  content?: string;
  toolCalls?: unknown[];
  error?: { category: string; providerCode: string; message: string };
}

function fixture(name: string): StreamFixture {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

async function* pieces(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

function stream(text: string, size = text.length || 1, prefillTrim = ''): AnthropicChunkStream {
  return new AnthropicChunkStream({ 'request-id': 'req_1' }, pieces(text, size), CREATED, prefillTrim);
}

async function collect(s: AsyncIterable<ChatCompletionChunk>): Promise<{ chunks: ChatCompletionChunk[]; error?: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const c of s) chunks.push(c);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks };
}

/** The part of a chunk stream the fixtures pin down; the usage chunk is checked apart. */
function project(chunks: ChatCompletionChunk[]) {
  return chunks.filter((c) => c.choices.length > 0).map((c) => ({ delta: c.choices[0]!.delta, finish_reason: c.choices[0]!.finish_reason }));
}

describe('AnthropicChunkStream against the SSE fixtures', () => {
  for (const name of ['stream-text', 'stream-tool-use', 'stream-thinking']) {
    // Whole body at once, one char per read (events split anywhere), and an awkward size.
    for (const size of [0, 1, 7]) {
      it(`${name}, read ${size || 'whole'}`, async () => {
        const f = fixture(name);
        const s = stream(f.sse, size || f.sse.length);
        const { chunks, error } = await collect(s);
        expect(error).toBeUndefined();
        expect(project(chunks)).toStrictEqual(f.chunks);
        const last = chunks[chunks.length - 1]!;
        expect(last.choices).toEqual([]);
        expect(last.usage).toStrictEqual(f.usage);
        for (const c of chunks) {
          // OpenAI's chunk shape, which typed clients decode: the fingerprint and each choice's logprobs present, as null.
          expect(c).toMatchObject({ id: f.id, object: 'chat.completion.chunk', created: CREATED, model: f.model, system_fingerprint: null });
          for (const choice of c.choices) expect(choice).toHaveProperty('logprobs', null);
        }
        expect(s.malformed).toBe(0);
        expect(s.headers).toEqual({ 'request-id': 'req_1' });
      });
    }
  }

  it('stream-error: text before the error event is delivered, then the classified error is thrown', async () => {
    const f = fixture('stream-error');
    const { chunks, error } = await collect(stream(f.sse));
    expect(project(chunks)).toStrictEqual(f.chunks);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject(f.error!);
  });

  it('the OpenAI SDK assembles the chunks into the same message as the buffered answer', async () => {
    const f = fixture('stream-tool-use');
    const { chunks } = await collect(stream(f.sse, 13));
    const lines = chunks.map((c) => JSON.stringify(c) + '\n').join('');
    const body = new Response(lines).body!;
    const assembled = await ChatCompletionStream.fromReadableStream(body).finalChatCompletion();
    expect(assembled.id).toBe(f.id);
    expect(assembled.model).toBe(f.model);
    expect(assembled.choices[0]!.message.content).toBe(f.content);
    expect(assembled.choices[0]!.message.tool_calls).toEqual(f.toolCalls);
    expect(assembled.choices[0]!.finish_reason).toBe('tool_calls');
    expect(assembled.usage).toMatchObject(f.usage as object);
  });
});

describe('AnthropicChunkStream endings', () => {
  const sse = fixture('stream-text').sse;
  const events = sse.split('\n\n').filter(Boolean);
  const upTo = (type: string) => events.slice(0, events.findIndex((e) => e.startsWith(`event: ${type}`)) + 1).join('\n\n') + '\n\n';

  it('a stream cut before its stop_reason throws network after the chunks it had', async () => {
    const { chunks, error } = await collect(stream(upTo('content_block_stop')));
    expect(project(chunks).map((c) => c.delta)).toEqual([{ role: 'assistant', content: '', refusal: null }, { content: 'Hello' }, { content: ' there' }, { content: '!' }]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).category).toBe('network');
  });

  it('a clean close after message_delta (no message_stop) is a finished answer with usage', async () => {
    const { chunks, error } = await collect(stream(upTo('message_delta')));
    expect(error).toBeUndefined();
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6 });
  });

  it('an empty body is a cut stream', async () => {
    const { chunks, error } = await collect(stream(''));
    expect(chunks).toEqual([]);
    expect((error as UpstreamError).category).toBe('network');
  });

  it('stops reading at message_stop, ignoring anything after it', async () => {
    const trailing = sse + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"late"}}\n\n';
    const { chunks, error } = await collect(stream(trailing));
    expect(error).toBeUndefined();
    expect(chunks.some((c) => c.choices[0]?.delta.content === 'late')).toBe(false);
  });

  it('skips and counts malformed events, ignores unknown ones', async () => {
    const noisy = sse.replace(
      'event: ping',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":\n\n' +
        'event: future_event\ndata: {"type":"future_event","x":1}\n\n' +
        'data: 42\n\n' +
        'event: ping',
    );
    const s = stream(noisy);
    const { chunks, error } = await collect(s);
    expect(error).toBeUndefined();
    expect(project(chunks)).toStrictEqual(fixture('stream-text').chunks);
    expect(s.malformed).toBe(2);
  });

  it('numbers tool calls by ordinal, not by content-block index, and merges cumulative usage', async () => {
    const ev = (o: unknown) => `event: x\ndata: ${JSON.stringify(o)}\n\n`;
    const body =
      ev({ type: 'message_start', message: { id: 'msg_t', model: 'm', usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 1 } } }) +
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }) +
      ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'a', input: {} } }) +
      ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } }) +
      ev({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_b', name: 'b', input: { q: 1 } } }) +
      ev({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30, input_tokens: 12 } }) +
      ev({ type: 'message_stop' });
    const { chunks } = await collect(stream(body));
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'toolu_a', type: 'function', function: { name: 'a', arguments: '' } },
      { index: 0, function: { arguments: '{}' } },
      // An input sent whole in content_block_start (not Anthropic's habit) still arrives.
      { index: 1, id: 'toolu_b', type: 'function', function: { name: 'b', arguments: '{"q":1}' } },
    ]);
    expect(chunks.at(-1)!.usage).toEqual({
      prompt_tokens: 17,
      completion_tokens: 30,
      total_tokens: 47,
      prompt_tokens_details: { cached_tokens: 5 },
    });
  });

  it('drops whitespace the client already had from a trimmed prefill, across deltas', async () => {
    const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const text = (t: string) => ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
    const body =
      ev({ type: 'message_start', message: { id: 'msg_p', model: 'm', usage: {} } }) +
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
      text('\n') +
      text('\nNext') +
      text(' line') +
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }) +
      ev({ type: 'message_stop' });
    const { chunks } = await collect(stream(body, body.length, '\n\n'));
    expect(chunks.map((c) => c.choices[0]?.delta.content).filter((t) => t)).toEqual(['Next', ' line']);
  });

  it('an error event before any content throws without yielding', async () => {
    const body = 'event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}\n\n';
    const { chunks, error } = await collect(stream(body));
    expect(chunks).toEqual([]);
    expect(error).toMatchObject({ category: 'rate_limited', providerCode: 'rate_limit_error' });
  });

  it('streams thinking as reasoning_content, and only a thinking block\'s: signatures and redacted thinking are dropped', async () => {
    const ev = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const body =
      ev({ type: 'message_start', message: { id: 'msg_r', model: 'm', usage: {} } }) +
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }) +
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }) +
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }) +
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCg' } }) +
      ev({ type: 'content_block_stop', index: 0 }) +
      ev({ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'EmwKAhgB' } }) +
      ev({ type: 'content_block_stop', index: 1 }) +
      ev({ type: 'content_block_start', index: 2, content_block: { type: 'text', text: '' } }) +
      // A thinking_delta aimed at a text block is not reasoning.
      ev({ type: 'content_block_delta', index: 2, delta: { type: 'thinking_delta', thinking: 'stray' } }) +
      ev({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Done.' } }) +
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }) +
      ev({ type: 'message_stop' });
    const { chunks, error } = await collect(stream(body, 5));
    expect(error).toBeUndefined();
    expect(project(chunks)).toStrictEqual([
      { delta: { role: 'assistant', content: '', refusal: null }, finish_reason: null },
      { delta: { reasoning_content: 'Let me ' }, finish_reason: null },
      { delta: { reasoning_content: 'think.' }, finish_reason: null },
      { delta: { content: 'Done.' }, finish_reason: null },
      { delta: {}, finish_reason: 'stop' },
    ]);
  });
});
