import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { OllamaChunkStream } from './stream.js';
import { piecesOf, readChunks, textAnswerChunks } from '../../../test/helpers/chunk-stream.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const CREATED = 1_767_225_600;

function run(text: string, size = text.length, model = 'llama3.2') {
  let n = 0;
  return readChunks(new OllamaChunkStream({}, piecesOf(text, size), model, CREATED, 'chatcmpl-r1', () => `call_gen${++n}`));
}

/** OpenAI's chunk members, the fingerprint among them: typed clients decode it, as each choice's logprobs. */
const base = (model = 'llama3.2') => ({ id: 'chatcmpl-r1', object: 'chat.completion.chunk', created: CREATED, model, system_fingerprint: null });

describe('Ollama NDJSON → OpenAI chunks', () => {
  it.each([1, 9, 100_000])('converts a text stream, read %i characters at a time', async (size) => {
    const { chunks, error, malformed } = await run(fixture('stream-text.ndjson'), size);
    expect(error).toBeUndefined();
    expect(malformed).toBe(0);
    const b = base();
    expect(chunks).toEqual(textAnswerChunks(b, ['The', ' sky', ' is blue.'], { prompt_tokens: 26, completion_tokens: 282, total_tokens: 308 }));
  });

  it('converts whole tool calls into tool_call deltas with ids, thinking into reasoning_content, finishes with tool_calls', async () => {
    const { chunks, error } = await run(fixture('stream-tool-call.ndjson'), 17, 'qwen3');
    expect(error).toBeUndefined();
    const b = base('qwen3');
    expect(chunks).toEqual([
      { ...b, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }] },
      { ...b, choices: [{ index: 0, delta: { reasoning_content: 'The user wants the weather in Toronto.' }, logprobs: null, finish_reason: null }] },
      {
        ...b,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: 'call_gen1', type: 'function', function: { name: 'get_current_weather', arguments: '{"format":"celsius","location":"Toronto"}' } },
              ],
            },
            logprobs: null,
            finish_reason: null,
          },
        ],
      },
      {
        ...b,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 1, id: 'call_k3x9', type: 'function', function: { name: 'get_time', arguments: '{"zone":"America/Toronto"}' } }] },
            logprobs: null,
            finish_reason: null,
          },
        ],
      },
      { ...b, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }] },
      { ...b, choices: [], usage: { prompt_tokens: 215, completion_tokens: 41, total_tokens: 256 } },
    ]);
  });

  it('throws a network error when the stream ends before done, after yielding what came', async () => {
    const lines = fixture('stream-text.ndjson').split('\n');
    const { chunks, error } = await run(lines.slice(0, 2).join('\n') + '\n');
    expect(chunks.map((c) => c.choices[0]!.delta.content)).toEqual(['', 'The', ' sky']);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).category).toBe('network');
  });

  it('fails on an error line after yielding the chunks before it', async () => {
    const lines = fixture('stream-text.ndjson').split('\n');
    const { chunks, error } = await run(`${lines[0]}\n{"error":"an error was encountered while running the model: unexpected EOF"}\n`);
    expect(chunks.map((c) => c.choices[0]!.delta.content)).toEqual(['', 'The']);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ category: 'server', message: 'an error was encountered while running the model: unexpected EOF' });
  });

  it('reads an error line by its words: a context overflow is not a plain failure', async () => {
    const lines = fixture('stream-text.ndjson').split('\n');
    const categoryOf = async (message: string) => ((await run(`${lines[0]}\n${JSON.stringify({ error: message })}\n`)).error as UpstreamError).category;
    expect(await categoryOf('the input length exceeds the context length')).toBe('context_length');
    expect(await categoryOf('model requires more system memory (9.1 GiB) than is available (4.0 GiB)')).toBe('server');
  });

  it('skips and counts malformed lines', async () => {
    const lines = fixture('stream-text.ndjson').split('\n');
    const broken = [lines[0], '{"model":"llama3.2","message":', '[]', '{"message":{"content":"no done flag"}}', ...lines.slice(1)].join('\n');
    const { chunks, error, malformed } = await run(broken, 11);
    expect(error).toBeUndefined();
    expect(malformed).toBe(3);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('The sky is blue.');
  });

  it('maps done_reason length to finish_reason length', async () => {
    const { chunks } = await run('{"message":{"role":"assistant","content":"abc"},"done":false}\n{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","eval_count":3}');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 0, completion_tokens: 3, total_tokens: 3 });
  });
});
