import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { CohereChunkStream } from './stream.js';
import { piecesOf, readChunks, textAnswerChunks } from '../../../test/helpers/chunk-stream.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const MODEL = 'command-r-plus-08-2024';
const CREATED = 1_767_225_600;

const run = (text: string, size = text.length) =>
  readChunks(new CohereChunkStream({}, piecesOf(text, size), MODEL, CREATED, 'chatcmpl-fallback', () => 'call_minted'));

/** OpenAI's chunk members, the fingerprint among them: typed clients decode it, as each choice's logprobs. */
const base = (id: string) => ({ id, object: 'chat.completion.chunk', created: CREATED, model: MODEL, system_fingerprint: null });

describe('Cohere v2 SSE → OpenAI chunks', () => {
  it.each([1, 7, 64, 100_000])('converts a text stream, read %i characters at a time', async (size) => {
    const { chunks, error, malformed } = await run(fixture('stream-text.sse'), size);
    expect(error).toBeUndefined();
    expect(malformed).toBe(0);
    const b = base('a8fc192e-4bb8-4e15-ae1f-a174e8b02ae8');
    expect(chunks).toEqual(textAnswerChunks(b, ['Coca', '-Cola', ' is a soft drink.'], { prompt_tokens: 21, completion_tokens: 8, total_tokens: 29 }));
  });

  it('converts parallel tool calls: start with id and name, argument deltas, finish tool_calls, usage', async () => {
    const { chunks, error } = await run(fixture('stream-tool-call.sse'), 13);
    expect(error).toBeUndefined();
    const b = base('e8f9afc5-4a2b-4c48-a7ad-3bb3c2fa0d7e');
    expect(chunks[0]).toEqual({ ...b, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }] });
    expect(chunks[1]).toEqual({
      ...b,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: 'get_weather_nsz5zm3w56q3', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
          logprobs: null,
          finish_reason: null,
        },
      ],
    });
    // The tool plan is the model's reasoning, not its answer: no content chunk.
    expect(chunks.some((c) => c.choices[0]?.delta.content)).toBe(false);
    const args: string[] = [];
    const ids: string[] = [];
    for (const c of chunks) {
      for (const t of c.choices[0]?.delta.tool_calls ?? []) {
        if (t.id) ids[t.index] = t.id;
        args[t.index] = (args[t.index] ?? '') + (t.function?.arguments ?? '');
      }
    }
    expect(ids).toEqual(['get_weather_nsz5zm3w56q3', 'get_time_8s1x9f0a2b3c']);
    expect(args).toEqual(['{\n    "location": "Toronto"\n}', '{}']);
    expect(chunks.at(-2)).toEqual({ ...b, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }] });
    expect(chunks.at(-1)).toEqual({
      ...b,
      choices: [],
      usage: { prompt_tokens: 50, completion_tokens: 26, total_tokens: 76, prompt_tokens_details: { cached_tokens: 176 } },
    });
  });

  it('throws a network error when the stream ends before message-end, after yielding what came', async () => {
    const full = fixture('stream-text.sse');
    const { chunks, error } = await run(full.slice(0, full.indexOf('event: message-end')));
    expect(chunks.map((c) => c.choices[0]?.delta.content)).toEqual(['', 'Coca', '-Cola', ' is a soft drink.']);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).category).toBe('network');
  });

  it('does not take [DONE] alone as a finished answer', async () => {
    const full = fixture('stream-text.sse');
    const { error } = await run(full.slice(0, full.indexOf('event: message-end')) + 'data: [DONE]\n\n');
    expect((error as UpstreamError).category).toBe('network');
  });

  it('ends normally at message-end even without [DONE]', async () => {
    const full = fixture('stream-text.sse');
    const { chunks, error } = await run(full.slice(0, full.indexOf('data: [DONE]')));
    expect(error).toBeUndefined();
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('skips and counts malformed events', async () => {
    const full = fixture('stream-text.sse');
    const at = full.indexOf('event: content-end');
    const broken = full.slice(0, at) + 'event: content-delta\ndata: {"type":"content-delta",\n\ndata: 42\n\n' + full.slice(at);
    const { chunks, error, malformed } = await run(broken, 5);
    expect(error).toBeUndefined();
    expect(malformed).toBe(2);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null).join('')).toBe('Coca-Cola is a soft drink.');
  });

  it('gives a tool call that starts without an id a new one (a client needs one to answer it)', async () => {
    const events = [
      { type: 'message-start', id: 'm1', delta: { message: { role: 'assistant' } } },
      { type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { type: 'function', function: { name: 'f', arguments: '{}' } } } } },
      { type: 'tool-call-end', index: 0 },
      { type: 'message-end', delta: { finish_reason: 'TOOL_CALL' } },
    ];
    const text = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    const { chunks } = await run(text);
    expect(chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).map((t) => t.id)).toEqual(['call_minted']);
  });

  it('gives thinking content blocks as reasoning_content, not content, and maps ERROR_TOXIC to content_filter', async () => {
    const events = [
      { type: 'message-start', id: 'm1', delta: { message: { role: 'assistant' } } },
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'Let me think' } } } },
      { type: 'content-end', index: 0 },
      { type: 'content-start', index: 1, delta: { message: { content: { type: 'text', text: '' } } } },
      { type: 'content-delta', index: 1, delta: { message: { content: { text: 'Sorry.' } } } },
      { type: 'content-end', index: 1 },
      { type: 'message-end', delta: { finish_reason: 'ERROR_TOXIC', usage: { billed_units: { input_tokens: 3, output_tokens: 1 } } } },
    ];
    const text = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
    const { chunks } = await run(text);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null)).toEqual(['', null, 'Sorry.', null, null]);
    expect(chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? null)).toEqual([null, 'Let me think', null, null, null]);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('content_filter');
  });
});
