import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { parseMessage, toChatCompletion } from './convert-response.js';
import { mapStopReason } from './map-stop-reason.js';
import type { AnthropicMessage } from './wire.js';

const CREATED = 1_700_000_000;

function fixture(name: string): { anthropicResponse: AnthropicMessage; chatCompletion: unknown; prefillTrim?: string } {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8'));
}

const message = (over: Partial<AnthropicMessage>): AnthropicMessage => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-x',
  content: [],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 1, output_tokens: 1 },
  ...over,
});

describe('toChatCompletion against the wire fixtures', () => {
  for (const name of ['text', 'system', 'multi-turn', 'tools', 'image']) {
    it(name, () => {
      const f = fixture(name);
      // Through the byte parser, as the adapter does.
      const msg = parseMessage(new TextEncoder().encode(JSON.stringify(f.anthropicResponse)), 'claude-asked');
      expect(toChatCompletion(msg, CREATED, f.prefillTrim)).toStrictEqual(f.chatCompletion);
    });
  }
});

describe('toChatCompletion details', () => {
  it('answers tool calls alone with content null, several in order', () => {
    const c = toChatCompletion(
      message({
        stop_reason: 'tool_use',
        content: [
          { type: 'tool_use', id: 'toolu_a', name: 'a', input: { x: 1 } },
          { type: 'tool_use', id: 'toolu_b', name: 'b', input: {} },
        ],
      }),
      CREATED,
    );
    expect(c.choices[0]!.message.content).toBeNull();
    expect(c.choices[0]!.message.tool_calls).toEqual([
      { id: 'toolu_a', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
      { id: 'toolu_b', type: 'function', function: { name: 'b', arguments: '{}' } },
    ]);
    expect(c.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('gives thinking blocks as reasoning_content, skips redacted ones, and joins text blocks', () => {
    const c = toChatCompletion(
      message({
        content: [
          { type: 'thinking', thinking: 'secret', signature: 'sig' },
          { type: 'text', text: 'Hello ' },
          { type: 'redacted_thinking', data: 'xx' },
          { type: 'text', text: 'world' },
        ],
      }),
      CREATED,
    );
    expect(c.choices[0]!.message.content).toBe('Hello world');
    expect(c.choices[0]!.message.reasoning_content).toBe('secret');
  });

  it('has no reasoning_content without thinking', () => {
    const c = toChatCompletion(message({ content: [{ type: 'text', text: 'Hi' }] }), CREATED);
    expect(c.choices[0]!.message).not.toHaveProperty('reasoning_content');
  });

  it('an empty answer is an empty string, not null', () => {
    expect(toChatCompletion(message({ content: [] }), CREATED).choices[0]!.message.content).toBe('');
  });

  it('drops only the repeated part of a trimmed prefill', () => {
    const c = (text: string, trim: string) =>
      toChatCompletion(message({ content: [{ type: 'text', text }] }), CREATED, trim).choices[0]!.message.content;
    expect(c('\n\nNext', '\n\n')).toBe('Next');
    expect(c('\nNext', '\n\n')).toBe('Next');
    expect(c('Next', '\n\n')).toBe('Next');
    expect(c(' world', '\n')).toBe(' world');
  });

  it('rejects bodies that are not messages as server faults', () => {
    const bad = (s: string) => () => parseMessage(new TextEncoder().encode(s), 'claude-asked');
    expect(bad('{"type":"message"')).toThrow(UpstreamError);
    expect(bad('{"id":"msg_1","type":"message"}')).toThrow(/not a message/);
    try {
      bad('[]')();
    } catch (err) {
      expect((err as UpstreamError).category).toBe('server');
    }
  });
});

describe('mapStopReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['something_new', 'stop'],
    [null, 'stop'],
  ] as const)('%s → %s', (reason, finish) => {
    expect(mapStopReason(reason)).toBe(finish);
  });
});
