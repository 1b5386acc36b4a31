import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../protocol/openai.js';
import { resumeRequest } from './resume-request.js';

const base: ChatRequest = { model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] };

describe('resumeRequest', () => {
  it('sends the delivered text as a final assistant message and leaves the client\'s request as it was', () => {
    const out = resumeRequest(base, 'Hello wor', 3);
    expect(out.messages).toEqual([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello wor' }]);
    expect(out).not.toHaveProperty('max_tokens');
    expect(base.messages).toHaveLength(1);
  });

  it('takes the tokens already produced off max_tokens and max_completion_tokens, down to one at least', () => {
    expect(resumeRequest({ ...base, max_tokens: 20 }, 'x', 3).max_tokens).toBe(17);
    expect(resumeRequest({ ...base, max_completion_tokens: 20 }, 'x', 3).max_completion_tokens).toBe(17);
    expect(resumeRequest({ ...base, max_tokens: 20 }, 'x', 25).max_tokens).toBe(1);
    expect(resumeRequest({ ...base, max_tokens: null }, 'x', 3).max_tokens).toBeNull();
  });

  it('extends the client\'s own prefill (a conversation ending with an assistant message) instead of adding a second assistant turn', () => {
    const prefix = { role: 'assistant' as const, content: '{"name": "', prefix: true };
    expect(resumeRequest({ ...base, messages: [...base.messages, prefix] }, 'Ada", "a', 3).messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '{"name": "Ada", "a', prefix: true },
    ]);
    const parts = { role: 'assistant' as const, content: [{ type: 'text', text: 'Hello ' }] };
    expect(resumeRequest({ ...base, messages: [...base.messages, parts] }, 'wor', 1).messages.at(-1)).toEqual({ role: 'assistant', content: 'Hello wor' });
  });

  it('appends the delivered text after an assistant turn that called tools: that turn is not a prefill', () => {
    const called = { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } }] };
    const out = resumeRequest({ ...base, messages: [...base.messages, called] }, 'Hel', 1);
    expect(out.messages.slice(1)).toEqual([called, { role: 'assistant', content: 'Hel' }]);
  });

  it('so is one that made a legacy function_call', () => {
    const called = { role: 'assistant' as const, content: null, function_call: { name: 'f', arguments: '{}' } };
    const out = resumeRequest({ ...base, messages: [...base.messages, called] }, 'Hel', 1);
    expect(out.messages.slice(1)).toEqual([called, { role: 'assistant', content: 'Hel' }]);
  });
});
