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
});
