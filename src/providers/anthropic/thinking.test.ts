import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { DEFAULT_MAX_TOKENS, toAnthropicRequest } from './convert-request.js';
import { isAdaptive } from './thinking.js';

const OLD = 'claude-sonnet-4-20250514';
const NEW = 'claude-sonnet-4-6';

function convert(req: Partial<ChatRequest>, model = OLD) {
  return toAnthropicRequest({ model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...req }, model, false).body;
}

describe('reasoning_effort → Anthropic thinking', () => {
  it('sends nothing without an effort, for none, and for a value it does not know', () => {
    for (const reasoning_effort of [undefined, null, 'none', 'ultra']) {
      const body = convert({ reasoning_effort, temperature: 0.2 });
      expect(body).not.toHaveProperty('thinking');
      expect(body).not.toHaveProperty('output_config');
      expect(body.max_tokens).toBe(DEFAULT_MAX_TOKENS);
      expect(body.temperature).toBe(0.2);
    }
  });

  it('gives models before 4.6 a budget of at least 1024, below max_tokens, the answer keeping its room', () => {
    expect(convert({ reasoning_effort: 'minimal' })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: DEFAULT_MAX_TOKENS + 1024 });
    expect(convert({ reasoning_effort: 'low' }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(convert({ reasoning_effort: 'medium' }).thinking).toEqual({ type: 'enabled', budget_tokens: 8192 });
    expect(convert({ reasoning_effort: 'high' }).thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(convert({ reasoning_effort: 'xhigh' }).thinking).toEqual({ type: 'enabled', budget_tokens: 24576 });
    // A small limit is the answer's: the budget goes on top of it.
    expect(convert({ reasoning_effort: 'low', max_tokens: 100 }).max_tokens).toBe(2148);
    expect(convert({ reasoning_effort: 'low', max_completion_tokens: 3000 }).max_tokens).toBe(5048);
    // One that leaves the answer 1024 tokens beside the budget is kept, as OpenAI counts reasoning in it.
    expect(convert({ reasoning_effort: 'low', max_tokens: 3072 }).max_tokens).toBe(3072);
    expect(convert({ reasoning_effort: 'low', max_tokens: 64000 }).max_tokens).toBe(64000);
  });

  it('never raises max_tokens past 32,000 (Claude Opus 4’s output limit) for a budget: the budget shrinks instead', () => {
    // 20,000 + 24,576 was 44,576: a 400 from Opus 4 and 4.1.
    expect(convert({ reasoning_effort: 'xhigh', max_tokens: 20_000 }, 'claude-opus-4-1-20250805')).toMatchObject({
      max_tokens: 32_000,
      thinking: { type: 'enabled', budget_tokens: 12_000 },
    });
    expect(convert({ reasoning_effort: 'high', max_tokens: 15_000 })).toMatchObject({ max_tokens: 31_384, thinking: { budget_tokens: 16_384 } });
    // At least 1024 of thinking, whatever the answer's room (a room that large keeps the client's limit).
    expect(convert({ reasoning_effort: 'xhigh', max_tokens: 25_000 })).toMatchObject({ max_tokens: 32_000, thinking: { budget_tokens: 7_000 } });
  });

  it('gives Claude 4.6 and later adaptive thinking with an effort', () => {
    expect(convert({ reasoning_effort: 'minimal' }, NEW)).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } });
    expect(convert({ reasoning_effort: 'low' }, NEW).output_config).toEqual({ effort: 'low' });
    expect(convert({ reasoning_effort: 'medium' }, NEW).output_config).toEqual({ effort: 'medium' });
    expect(convert({ reasoning_effort: 'high' }, NEW).output_config).toEqual({ effort: 'high' });
    expect(convert({ reasoning_effort: 'xhigh' }, NEW).output_config).toEqual({ effort: 'high' });
    expect(convert({ reasoning_effort: 'xhigh' }, 'claude-opus-4-7').output_config).toEqual({ effort: 'max' });
    expect(convert({ reasoning_effort: 'high' }, NEW)).not.toHaveProperty('thinking.budget_tokens');
    expect(convert({ reasoning_effort: 'none' }, NEW)).not.toHaveProperty('thinking');
  });

  it('asks the models that omit their thinking text by default (after 4.6) for it summarized, and 4.6 for nothing more', () => {
    for (const m of ['claude-opus-4-7', 'claude-sonnet-5', 'claude-mythos-preview', 'claude-fable-5', 'us.anthropic.claude-opus-4-8-v1:0']) {
      expect(convert({ reasoning_effort: 'low' }, m).thinking, m).toEqual({ type: 'adaptive', display: 'summarized' });
    }
    for (const m of ['claude-opus-4-6', 'claude-sonnet-4-6', 'anthropic.claude-opus-4-6-v1']) {
      expect(convert({ reasoning_effort: 'low' }, m).thinking, m).toEqual({ type: 'adaptive' });
    }
  });

  it('tells adaptive models by name, a dated suffix being no minor version', () => {
    for (const m of ['claude-opus-4-6', 'claude-sonnet-4-6', 'claude-opus-4-7', 'anthropic.claude-opus-4-6-v1', 'claude-sonnet-5', 'claude-mythos-preview', 'claude-mythos-5', 'claude-fable-5', 'anthropic.claude-fable-5']) {
      expect(isAdaptive(m), m).toBe(true);
    }
    for (const m of ['claude-sonnet-4-20250514', 'claude-opus-4-1-20250805', 'claude-sonnet-4-5', 'claude-haiku-4-5-20251001', 'claude-3-7-sonnet-20250219', 'claude']) {
      expect(isAdaptive(m), m).toBe(false);
    }
  });

  it('asks models before Claude 3.7 Sonnet, which cannot think, for none', () => {
    for (const m of ['claude-3-5-sonnet-20241022', 'claude-3-5-haiku-latest', 'claude-3-opus-20240229', 'claude-2.1', 'claude-instant-1.2']) {
      expect(convert({ reasoning_effort: 'high', temperature: 0.2 }, m), m).not.toHaveProperty('thinking');
      expect(convert({ reasoning_effort: 'high', temperature: 0.2 }, m).temperature, m).toBe(0.2);
    }
    expect(convert({ reasoning_effort: 'high' }, 'claude-3-7-sonnet-20250219')).toHaveProperty('thinking.type', 'enabled');
  });

  it('drops temperature and top_p, which Anthropic refuses beside thinking', () => {
    expect(convert({ reasoning_effort: 'low', temperature: 0.3 })).not.toHaveProperty('temperature');
    expect(convert({ reasoning_effort: 'low', top_p: 0.5 })).not.toHaveProperty('top_p');
  });

  it('asks for no thinking where Anthropic would refuse the request for it', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    expect(convert({ reasoning_effort: 'high', tools, tool_choice: 'required' })).not.toHaveProperty('thinking');
    expect(convert({ reasoning_effort: 'high', tools, tool_choice: { type: 'function', function: { name: 'f' } } })).not.toHaveProperty('thinking');
    expect(convert({ reasoning_effort: 'high', tools, tool_choice: 'auto' })).toHaveProperty('thinking');
    // A prefill to continue.
    expect(convert({ reasoning_effort: 'high', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Once' }] })).not.toHaveProperty('thinking');
    // Tool calls being answered, whose signed thinking the client never had.
    const answering: ChatRequest['messages'] = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ];
    expect(convert({ reasoning_effort: 'high', tools, messages: answering })).not.toHaveProperty('thinking');
    // Once a plain answer closed that turn, thinking is back.
    expect(convert({ reasoning_effort: 'high', tools, messages: [...answering, { role: 'assistant', content: 'Sunny.' }, { role: 'user', content: 'thanks' }] })).toHaveProperty('thinking');
  });
});
