import { describe, expect, it } from 'vitest';
import { bodyWithModel } from './index.js';

describe('bodyWithModel', () => {
  it('serialises the request with only the model replaced, keys in the client order, and leaves the request as it was', () => {
    const req = { temperature: 0.2, model: 'chat', messages: [{ role: 'user', content: 'say "model": hi' }], max_tokens: 5 };
    const body = bodyWithModel(req, 'gpt-4o-mini');
    expect(body).toBe('{"temperature":0.2,"model":"gpt-4o-mini","messages":[{"role":"user","content":"say \\"model\\": hi"}],"max_tokens":5}');
    expect(req.model).toBe('chat');
  });

  it('restores the model even when serialising throws', () => {
    const req: { model: string; self?: unknown } = { model: 'chat' };
    req.self = req;
    expect(() => bodyWithModel(req, 'gpt-4o-mini')).toThrow(TypeError);
    expect(req.model).toBe('chat');
  });
});
