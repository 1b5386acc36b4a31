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
  // What it is for: V8 says only "Unexpected token 'X', <an excerpt> is not valid JSON", or "Unexpected end".
  it('places the errors V8 gives no position for, at the token that breaks the grammar', () => {
    const cases: [string, number][] = [
      ['{"a": ["SECRET",]}', 16], // the ] after a trailing comma in a list
      ['[1,\n 2,\n ]', 9],
      ['{"a": tru}', 6], // the misspelt literal
      ['{"a": NaN}', 6],
      ['{"a": [1, ', 10], // the end: it stopped too soon
      ['   ', 3],
      ['// a comment\n{}', 0], // JSON has no comments
    ];
    for (const [text, at] of cases) {
      expect(v8Offset(text), text).toBeUndefined();
      expect(jsonErrorOffset(text), JSON.stringify(text)).toBe(at);
    }
  });

  it('agrees with V8 where V8 says where', () => {
    for (const text of ['{"a": 1,}', '{"a" 1}', '{"a": 1}}', '[1 2]', '{"a": 01}']) expect(jsonErrorOffset(text), text).toBe(v8Offset(text));
  });

  it('gives up, without throwing, on a file nested too deep for its recursion', () => {
    expect(jsonErrorOffset(`${'['.repeat(200_000)},`)).toBeUndefined();
  });
});
