import { describe, expect, it } from 'vitest';
import { forgetRawBody, rawBodyOf, rememberRawBody, spliceModel } from './raw-body.js';

const b = (s: string) => Buffer.from(s);

describe('spliceModel', () => {
  it('replaces a leading model, whatever follows', () => {
    expect(spliceModel(b('{"model":"chat","messages":[]}'), 'chat', 'gpt-4o-mini')!.toString()).toBe('{"model":"gpt-4o-mini","messages":[]}');
    expect(spliceModel(b('{"model":"chat"}'), 'chat', 'x')!.toString()).toBe('{"model":"x"}');
    expect(spliceModel(b('{"model":"smärt","n":1}'), 'smärt', 'a/b "c"')!.toString()).toBe('{"model":"a/b \\"c\\"","n":1}');
  });

  it('declines anything it cannot splice unambiguously', () => {
    expect(spliceModel(b('{"messages":[],"model":"chat"}'), 'chat', 'x')).toBeUndefined(); // not first
    expect(spliceModel(b('{ "model":"chat","n":1}'), 'chat', 'x')).toBeUndefined(); // whitespace
    expect(spliceModel(b('{"model" : "chat","n":1}'), 'chat', 'x')).toBeUndefined();
    expect(spliceModel(b('{"model":"chat2","n":1}'), 'chat', 'x')).toBeUndefined(); // a longer name
    expect(spliceModel(b('{"model":"\\u0063hat","n":1}'), 'chat', 'x')).toBeUndefined(); // escaped
    expect(spliceModel(b('{"model":"chat"'), 'chat', 'x')).toBeUndefined(); // truncated
  });

  it('declines a body with a second "model" anywhere, or any \\u escape (which could spell one)', () => {
    expect(spliceModel(b('{"model":"chat","messages":[],"model":"chat"}'), 'chat', 'x')).toBeUndefined();
    expect(spliceModel(b('{"model":"chat","messages":[],"mod\\u0065l":"chat"}'), 'chat', 'x')).toBeUndefined();
    expect(spliceModel(b('{"model":"chat","messages":[{"role":"model","content":"hi"}]}'), 'chat', 'x')).toBeUndefined();
    expect(spliceModel(b('{"model":"chat","messages":[{"role":"user","content":"caf\\u00e9"}]}'), 'chat', 'x')).toBeUndefined();
    // A mention inside content is escaped, so it does not count.
    expect(spliceModel(b('{"model":"chat","messages":[{"role":"user","content":"the \\"model\\" key"}]}'), 'chat', 'x')).toBeDefined();
  });
});

describe('rememberRawBody', () => {
  it('belongs to the parsed object only: a copy derived from it has no bytes', () => {
    const req = { model: 'chat', messages: [] as unknown[] };
    rememberRawBody(req, b('{"model":"chat","messages":[]}'));
    expect(rawBodyOf(req)).toBeDefined();
    expect(rawBodyOf({ ...req, messages: [{ role: 'assistant', content: 'prefill' }] })).toBeUndefined();
    forgetRawBody(req);
    expect(rawBodyOf(req)).toBeUndefined();
  });
});
