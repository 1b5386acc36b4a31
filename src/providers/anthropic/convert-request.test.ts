import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { DEFAULT_MAX_TOKENS, toAnthropicRequest } from './convert-request.js';

const MODEL = 'claude-sonnet-4-20250514';

function fixture(name: string): { chatRequest: ChatRequest; anthropicRequest: unknown; prefillTrim?: string } {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

function convert(req: Partial<ChatRequest>, stream = false) {
  return toAnthropicRequest({ model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...req }, MODEL, stream);
}

describe('toAnthropicRequest against the wire fixtures', () => {
  for (const name of ['text', 'system', 'multi-turn', 'tools', 'image', 'prompt-cache']) {
    it(name, () => {
      const f = fixture(name);
      const { body, prefillTrim } = toAnthropicRequest(f.chatRequest, MODEL, false);
      // toStrictEqual: no stray undefined fields either.
      expect(body).toStrictEqual(f.anthropicRequest);
      expect(prefillTrim).toBe(f.prefillTrim ?? '');
    });
  }
});

describe('toAnthropicRequest details', () => {
  it('asks for a stream only when streaming', () => {
    expect(convert({}, true).body.stream).toBe(true);
    expect('stream' in convert({}, false).body).toBe(false);
  });

  it('defaults max_tokens, and prefers max_completion_tokens over max_tokens', () => {
    expect(convert({}).body.max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(convert({ max_tokens: 77 }).body.max_tokens).toBe(77);
    expect(convert({ max_tokens: 77, max_completion_tokens: 12 }).body.max_tokens).toBe(12);
  });

  it('maps every tool_choice form, and omits it without tools', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    expect(convert({ tools }).body.tool_choice).toBeUndefined();
    expect(convert({ tools, tool_choice: 'auto' }).body.tool_choice).toEqual({ type: 'auto' });
    expect(convert({ tools, tool_choice: 'required' }).body.tool_choice).toEqual({ type: 'any' });
    expect(convert({ tools, tool_choice: 'none' }).body.tool_choice).toEqual({ type: 'none' });
    expect(convert({ tools, tool_choice: { type: 'function', function: { name: 'f' } } }).body.tool_choice).toEqual({
      type: 'tool',
      name: 'f',
    });
    expect(convert({ tools, parallel_tool_calls: false }).body.tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    // Without tools, 'none' means no tools; a required call cannot be honoured, and is refused.
    expect(convert({ tool_choice: 'none' }).body).not.toHaveProperty('tool_choice');
    expect(convert({ tool_choice: 'none' }).body).not.toHaveProperty('tools');
    expect(() => convert({ tool_choice: 'required' })).toThrow(expect.objectContaining({ param: 'tool_choice', unsent: true }));
  });

  it('clamps temperature into Anthropic range and splits stop lists', () => {
    expect(convert({ temperature: 1.7 }).body.temperature).toBe(1);
    expect(convert({ temperature: 0 }).body.temperature).toBe(0);
    expect(convert({ stop: ['END', '', '###'] }).body.stop_sequences).toEqual(['END', '###']);
    expect(convert({ stop: null }).body).not.toHaveProperty('stop_sequences');
  });

  it('turns response_format into a system instruction, after the client system prompt', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    const { body } = convert({
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Give me a.' },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    expect(body.system).toMatch(/^Be terse\.\n\nRespond with a single JSON value that conforms to this JSON Schema/);
    expect(body.system).toContain(JSON.stringify(schema));
    expect(convert({ response_format: { type: 'json_object' } }).body.system).toMatch(/valid JSON object/);
    expect(convert({ response_format: { type: 'text' } }).body).not.toHaveProperty('system');
  });

  it('keeps the prefill text but trims its trailing whitespace, returning what was trimmed', () => {
    const { body, prefillTrim } = convert({
      messages: [
        { role: 'user', content: 'Count to three.' },
        { role: 'assistant', content: [{ type: 'text', text: 'One,' }, { type: 'text', text: 'two, \n' }] },
      ],
    });
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'One,' },
        { type: 'text', text: 'two,' },
      ],
    });
    expect(prefillTrim).toBe(' \n');
  });

  it('trims a prefill with a long run of inner whitespace in linear time (a trailing-whitespace regex backtracked: 100K spaces took 4 s)', () => {
    const text = `Answer:${' '.repeat(200_000)}x \n`;
    const started = performance.now();
    const { body, prefillTrim } = convert({ messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: text }] });
    expect(performance.now() - started).toBeLessThan(500);
    expect(body.messages[1]!.content).toBe(text.slice(0, -2));
    expect(prefillTrim).toBe(' \n');
  });

  it('does not trim an assistant message that is not last', () => {
    const { body, prefillTrim } = convert({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b ' },
        { role: 'user', content: 'c' },
      ],
    });
    expect(body.messages[1]!.content).toBe('b ');
    expect(prefillTrim).toBe('');
  });

  it('sends a tool result without content when the tool returned nothing', () => {
    const { body } = convert({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '[1]' } }] },
        { role: 'tool', tool_call_id: 't1', content: '' },
      ],
    });
    expect(body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] });
    expect(body.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }] });
  });

  it('converts a PDF file part into a document block', () => {
    const { body } = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    });
    expect(body.messages[0]!.content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'a.pdf' },
      { type: 'text', text: 'Summarise.' },
    ]);
  });

  it('refuses what it cannot convert instead of silently dropping it', () => {
    const audio = () =>
      convert({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] });
    expect(audio).toThrow(UpstreamError);
    expect(audio).toThrow(/input_audio/);
    try {
      audio();
    } catch (err) {
      expect((err as UpstreamError).category).toBe('invalid_request');
    }
    const ftp = () =>
      convert({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] });
    expect(ftp).toThrow(UpstreamError);
  });

  it('gives a tool call id repeated thousands of times its fresh ids in linear time (a 4 MB history held the event loop for a minute)', () => {
    const n = 12_000;
    const calls = Array.from({ length: n }, () => ({ id: 'call_0', type: 'function' as const, function: { name: 'f', arguments: '{}' } }));
    const results = Array.from({ length: n }, (_, i) => ({ role: 'tool' as const, tool_call_id: 'call_0', content: `r${i}` }));
    const started = performance.now();
    const { body } = convert({ messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: calls }, ...results] });
    // Linear: tens of ms on a slow machine; the quadratic search took seconds here.
    expect(performance.now() - started).toBeLessThan(1000);
    const blocks = body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const uses = blocks.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    const answered = blocks.filter((b) => b.type === 'tool_result').map((b) => (b as { tool_use_id: string }).tool_use_id);
    expect(new Set(uses).size).toBe(n);
    expect(uses.slice(0, 3)).toEqual(['call_0', 'call_0_2', 'call_0_3']);
    expect(answered).toEqual(uses);
  });
});

describe('toAnthropicRequest prompt-cache breakpoints', () => {
  const mark = { type: 'ephemeral' };
  it('moves the breakpoint of a blank part, which is dropped, to the block before it', () => {
    const { body } = convert({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            { type: 'text', text: '  ', cache_control: mark },
          ],
        },
      ],
    });
    expect(body.messages[0]!.content).toStrictEqual([{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' }, cache_control: mark }]);
  });

  it('marks the last block of a marked assistant message, and keeps a system prompt without breakpoints one string', () => {
    const { body } = convert({
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }], cache_control: mark },
        { role: 'user', content: 'go on' },
      ],
    });
    expect(body.system).toBe('a\nb');
    expect(body.messages[1]!.content).toStrictEqual([{ type: 'text', text: 'one' }, { type: 'text', text: 'two', cache_control: mark }]);
  });

  it('refuses, for this candidate, a fifth breakpoint and a cache_control of another shape', () => {
    const five = Array.from({ length: 5 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}`, cache_control: mark }) as const);
    for (const req of [
      { messages: [...five] },
      { messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'persistent' } }] }] },
      { messages: [{ role: 'user', content: 'x', cache_control: { type: 'ephemeral', ttl: '10m' } }] },
    ] as Partial<ChatRequest>[]) {
      let err: unknown;
      try {
        convert(req);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).unsent).toBe(true);
      expect((err as UpstreamError).message).toMatch(/cache_control/);
    }
  });
});
