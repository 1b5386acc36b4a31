import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../protocol/openai.js';
import { reasoningEffortOf } from './reasoning-effort.js';

const req = (reasoning_effort: unknown, messages: ChatRequest['messages']): ChatRequest => ({ model: 'm', messages, reasoning_effort } as ChatRequest);
const user = { role: 'user' as const, content: 'count to ten' };

describe('reasoningEffortOf', () => {
  it('reads a known effort, and treats an unknown or absent one as none given', () => {
    expect(reasoningEffortOf(req('high', [user]))).toBe('high');
    expect(reasoningEffortOf(req(undefined, [user]))).toBeUndefined();
    expect(reasoningEffortOf(req('ultra', [user]))).toBeUndefined();
  });

  it('asks a continuation of an assistant text (a prefill, as stream resume sends) to think the least it can', () => {
    expect(reasoningEffortOf(req('high', [user, { role: 'assistant', content: 'one two three' }]))).toBe('none');
    // Without an effort asked for, nothing is added.
    expect(reasoningEffortOf(req(undefined, [user, { role: 'assistant', content: 'one two' }]))).toBeUndefined();
    // A turn answering a tool is no continuation.
    expect(reasoningEffortOf(req('low', [user, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: '1' }]))).toBe('low');
  });
});
