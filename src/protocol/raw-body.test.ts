import { describe, expect, it } from 'vitest';
import { rawBodyOf, rememberRawBody, spliceModel } from './raw-body.js';

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
});

describe('rememberRawBody', () => {
  it('belongs to the parsed object only: a copy derived from it has no bytes', () => {
    const req = { model: 'chat', messages: [] as unknown[] };
    rememberRawBody(req, b('{"model":"chat","messages":[]}'));
    expect(rawBodyOf(req)).toBeDefined();
    expect(rawBodyOf({ ...req, messages: [{ role: 'assistant', content: 'prefill' }] })).toBeUndefined();
  });
});
