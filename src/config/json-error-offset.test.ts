import { describe, expect, it } from 'vitest';
import { jsonErrorOffset } from './json-error-offset.js';

/** JSON.parse's own position for `text`, where its message gives one. */
function v8Offset(text: string): number | undefined {
  try {
    JSON.parse(text);
  } catch (err) {
    const at = /at position (\d+)/.exec((err as Error).message);
    return at ? Number(at[1]) : undefined;
  }
  throw new Error(`valid JSON: ${text}`);
}

describe('jsonErrorOffset', () => {
  it('finds nothing wrong in JSON', () => {
    for (const text of ['{}', '[]', ' 0 ', '-0.5e+10', '"\\u00e9\\n"', '{"": [true, false, null, {"a": [1, {"b": -2E3}]}]}', '\r\n\t[ ]\n']) {
      expect(jsonErrorOffset(text), text).toBeUndefined();
      expect(() => JSON.parse(text)).not.toThrow();
    }
  });

  it('stops where JSON.parse does, wherever JSON.parse says where', () => {
    const broken = [
      '{"a": 1,}', '{"a" 1}', '{"a": [1, 2}', '{"a": "x', '{"a": 1}}', '{"a": "\u0001"}', '{"a": 01}', "{'a': 1}",
      '{"a": 1 "b": 2}', '{"a": -}', '{"a": 1.}', '{"a": 1e}', '{"a": "\\x"}', '{"a": "\\u12g4"}', '{"a":1} x', '{"a": "bad \n newline"}',
      '[1 2]', '{"a": [1, 2], "b": {"c": "d",}}', '{,}', '{"a"}',
    ];
    for (const text of broken) {
      const v8 = v8Offset(text);
      expect(v8, `V8 names no position for ${JSON.stringify(text)}`).toBeDefined();
      expect(jsonErrorOffset(text), JSON.stringify(text)).toBe(v8);
    }
  });

  // What this is for: V8 says only "Unexpected token 'X', <an excerpt> is not valid JSON", or "Unexpected end".
  it('places the errors V8 gives no position for', () => {
    expect(jsonErrorOffset('{"a": ["SECRET",]}')).toBe(16); // the ] after a trailing comma in a list
    expect(jsonErrorOffset('[1,\n 2,\n ]')).toBe(9);
    expect(jsonErrorOffset('{"a": tru}')).toBe(9); // where the literal stops spelling true
    expect(jsonErrorOffset('{"a": NaN}')).toBe(6);
    expect(jsonErrorOffset('{"a": [1, ')).toBe(10); // the end: it stopped too soon
    expect(jsonErrorOffset('')).toBe(0);
    expect(jsonErrorOffset('   ')).toBe(3);
    expect(jsonErrorOffset('{"a": "\\')).toBe(8);
    for (const text of ['{"a": ["SECRET",]}', '{"a": tru}', '{"a": NaN}', '{"a": [1, ', '']) expect(v8Offset(text)).toBeUndefined();
  });

  it('does not overflow the stack on a deeply nested file', () => {
    expect(jsonErrorOffset('['.repeat(200_000))).toBe(200_000);
    expect(jsonErrorOffset(`${'['.repeat(200_000)}1,]${']'.repeat(199_999)}`)).toBe(200_002);
  });
});
