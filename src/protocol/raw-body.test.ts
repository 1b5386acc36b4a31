import { describe, expect, it } from 'vitest';
import { forgetRawBody, isAsciiBody, leadFor, rememberRawBody, splicedBody } from './raw-body.js';

/** Parse `text` as the server does, keep its bytes, and splice `target` in. */
function splice(text: string, target: string): string | undefined {
  const parsed = JSON.parse(text) as { model: string };
  rememberRawBody(parsed, Buffer.from(text), text);
  return splicedBody(parsed, target)?.toString();
}

describe('splicedBody', () => {
  it('replaces a leading model, whatever follows', () => {
    expect(splice('{"model":"chat","messages":[]}', 'gpt-4o-mini')).toBe('{"model":"gpt-4o-mini","messages":[]}');
    expect(splice('{"model":"chat"}', 'x')).toBe('{"model":"x"}');
    expect(splice('{"model":"smärt","n":"é"}', 'a/b "c"')).toBe('{"model":"a/b \\"c\\"","n":"é"}');
    expect(splice('{"model":"chat","n":1}', 'chat')).toBe('{"model":"chat","n":1}');
  });

  it('declines anything it cannot splice unambiguously', () => {
    expect(splice('{"messages":[],"model":"chat"}', 'x')).toBeUndefined(); // not first
    expect(splice('{ "model":"chat","n":1}', 'x')).toBeUndefined(); // whitespace
    expect(splice('{"model" : "chat","n":1}', 'x')).toBeUndefined();
    expect(splice('{"model":"\\u0063hat","n":1}', 'x')).toBeUndefined(); // escaped
    expect(splice('{"model":"ch\\"at","n":1}', 'x')).toBeUndefined();
    expect(splice('{"model":"chat" ,"n":1}', 'x')).toBeUndefined();
  });

  it('declines a body with a second "model" anywhere, or any \\u escape (which could spell one)', () => {
    expect(splice('{"model":"chat","messages":[],"model":"chat"}', 'x')).toBeUndefined();
    expect(splice('{"model":"chat","messages":[],"model":"other"}', 'x')).toBeUndefined();
    expect(splice('{"model":"chat","messages":[],"mod\\u0065l":"chat"}', 'x')).toBeUndefined();
    expect(splice('{"model":"chat","messages":[{"role":"model","content":"hi"}]}', 'x')).toBeUndefined();
    expect(splice('{"model":"chat","messages":[{"role":"user","content":"caf\\u00e9"}]}', 'x')).toBeUndefined();
    // An escaped backslash before a \u escape: the escape still counts.
    expect(splice('{"model":"chat","messages":[{"role":"user","content":"a\\\\\\u00e9"}]}', 'x')).toBeUndefined();
    // A mention inside content is escaped, so it does not count.
    expect(splice('{"model":"chat","messages":[{"role":"user","content":"the \\"model\\" key"}]}', 'x')).toBe(
      '{"model":"x","messages":[{"role":"user","content":"the \\"model\\" key"}]}',
    );
  });

  it('declines a body that starts with a byte order mark (the decoded text is three bytes shorter than the bytes)', () => {
    const text = '{"model":"chat","messages":[]}';
    const parsed = JSON.parse(text) as { model: string };
    rememberRawBody(parsed, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), text);
    expect(splicedBody(parsed, 'x')).toBeUndefined();
  });

  it('splices past what only looks like those: an escaped backslash before a u, a name ending in "model"', () => {
    const path = '{"model":"chat","messages":[{"role":"user","content":"C:\\\\users\\\\me"}]}';
    expect(JSON.parse(path).messages[0].content).toBe('C:\\users\\me');
    expect(splice(path, 'x')).toBe(path.replace('"chat"', '"x"'));
    const named = '{"model":"chat","my_model":"m","messages":[{"role":"user","content":"a model\\"s view"}]}';
    expect(splice(named, 'x')).toBe(named.replace('"chat"', '"x"'));
  });

  it('belongs to the parsed object as it was: a derived copy, a changed model or a forgotten body get nothing', () => {
    const text = '{"model":"chat","messages":[]}';
    const req = JSON.parse(text) as { model: string; messages: unknown[] };
    rememberRawBody(req, Buffer.from(text), text);
    const derived: { model: string; messages: unknown[] } = { ...req, messages: [{ role: 'assistant', content: 'prefill' }] };
    expect(splicedBody(derived, 'x')).toBeUndefined();
    req.model = 'other';
    expect(splicedBody(req, 'x')).toBeUndefined();
    req.model = 'chat';
    expect(splicedBody(req, 'x')).toBeDefined();
    forgetRawBody(req);
    expect(splicedBody(req, 'x')).toBeUndefined();
  });
});

describe('isAsciiBody', () => {
  const kept = (text: string) => {
    const parsed = JSON.parse(text) as { model: string };
    rememberRawBody(parsed, Buffer.from(text), text);
    return parsed;
  };

  it('is true only for kept bytes one a character: any non-ASCII character, or a body not kept (a \\u escape could spell one), is not known ASCII', () => {
    expect(isAsciiBody(kept('{"model":"chat","messages":[{"role":"user","content":"hello"}]}'))).toBe(true);
    expect(isAsciiBody(kept('{"model":"chat","messages":[{"role":"user","content":"日本語"}]}'))).toBe(false);
    expect(isAsciiBody(kept('{"model":"chat","messages":[{"role":"user","content":"\\u65e5"}]}'))).toBe(false); // not kept: it has a \u escape
    expect(isAsciiBody(JSON.parse('{"model":"chat"}') as object)).toBe(false); // never kept
    const req = kept('{"model":"chat","messages":[]}');
    expect(isAsciiBody({ ...req })).toBe(false); // a derived copy is not what the bytes were
  });
});

describe('leads of spliced bodies', () => {
  it('a target first used after clients pinned thousands of made-up models is still built once and reused', () => {
    for (let i = 0; i < 5000; i++) leadFor(`openai/made-up-${i}`);
    const first = leadFor('fallback-model');
    expect(leadFor('fallback-model')).toBe(first);
    expect(first.toString()).toBe('{"model":"fallback-model"');
  });
});
