import { describe, expect, it } from 'vitest';
import { scanJsonShape } from './json-shape.js';

const b = (s: string) => Buffer.from(s);
const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'a "quoted" {brace} [bracket] \\ and \u00e9 \ud83d\ude00' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 1 } },
};

describe('scanJsonShape', () => {
  it('reads the top-level usage of a whole answer, however it is spaced', () => {
    const compact = JSON.stringify(completion);
    const pretty = `\n  ${JSON.stringify(completion, null, 2)}\r\n`;
    const counts = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
    for (const text of [compact, pretty]) expect(scanJsonShape(b(text), 'choices')).toStrictEqual({ usage: counts });
    expect(scanJsonShape(b('{"choices":[{}],"usage":null}'), 'choices')).toEqual({ usage: null });
    expect(scanJsonShape(b('\ufeff{"choices":[{}]}'), 'choices')).toEqual({ usage: null }); // a UTF-8 BOM, as a decoder would drop it
    expect(scanJsonShape(b('\ufeff\ufeff{"choices":[{}]}'), 'choices')).toBeUndefined();
    expect(scanJsonShape(b('{"choices":[{}]}'), 'choices')).toEqual({ usage: null });
    expect(scanJsonShape(b('{"data":[{"embedding":[0.1]}],"usage":{"prompt_tokens":2,"total_tokens":2}}'), 'data')).toEqual({
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
  });

  it('agrees with JSON.parse about which members count: top level only, the last of repeats', () => {
    // `usage` and `choices` nested elsewhere are not the answer's.
    expect(scanJsonShape(b('{"x":{"choices":[{}],"usage":{"total_tokens":9}},"choices":[{}]}'), 'choices')).toEqual({ usage: null });
    expect(scanJsonShape(b('{"x":{"choices":[{}]}}'), 'choices')).toBeUndefined();
    // Keys spelled inside strings are not keys.
    expect(scanJsonShape(b('{"note":"\\"choices\\":[","choices":[{}]}'), 'choices')).toEqual({ usage: null });
    expect(scanJsonShape(b('{"note":"\\"choices\\":["}'), 'choices')).toBeUndefined();
    expect(scanJsonShape(b('{"choices":[{}],"usage":{"total_tokens":1},"usage":{"total_tokens":2}}'), 'choices')).toEqual({ usage: { total_tokens: 2 } });
    expect(scanJsonShape(b('{"choices":[{}],"choices":{}}'), 'choices')).toBeUndefined();
    // A string ending in an escaped backslash closes there.
    expect(scanJsonShape(b('{"a":"\\\\","choices":[{}]}'), 'choices')).toEqual({ usage: null });
  });

  it('finds the end of a string wherever its escapes fall', () => {
    // Escaped quotes and backslashes (runs of them too) at every offset of strings up to 90 bytes long.
    for (let at = 0; at < 80; at++) {
      for (const esc of ['\\"', '\\\\', '\\\\\\"']) {
        const value = `${'x'.repeat(at)}${esc}${'y'.repeat(at % 7)}`;
        const text = `{"s":"${value}","choices":[{}],"usage":{"total_tokens":${at}}}`;
        expect(JSON.parse(text).s.length).toBeGreaterThan(at); // the test's own JSON is valid
        expect(scanJsonShape(b(text), 'choices'), text).toEqual({ usage: { total_tokens: at } });
        // The same string left open before a closing brace: only the escape handling tells the brace is inside the string.
        expect(scanJsonShape(b(`{"choices":[{}],"s":"${value}}`), 'choices'), text).toBeUndefined();
      }
    }
  });

  it('refuses what is not one whole JSON object with the array', () => {
    const refused = [
      '',
      '   ',
      '<html><body>502 Bad Gateway</body></html>',
      'null',
      '[{"choices":[{}]}]',
      '{"error":{"message":"overloaded"}}',
      '{"choices":"none"}',
      '{"choices":[]}',
      '{"choices":[ null ]}',
      '{"choices":[1,{}]}',
      '{"choices":["x"]}',
      '{"choices":[{}]}{"choices":[{}]}',
      '{"choices":[{}]} trailing',
      '{"choices":[}',
      '{"choices":[{}]]',
      '{"choices":["unterminated]}',
    ];
    for (const text of refused) expect(scanJsonShape(b(text), 'choices'), text).toBeUndefined();
  });

  it('refuses every truncation of a valid answer', () => {
    const text = b(JSON.stringify(completion));
    for (let end = 0; end < text.length; end++) expect(scanJsonShape(text.subarray(0, end), 'choices'), `cut at ${end}`).toBeUndefined();
  });

  it('reads only plain counts from usage, and a broken one does not fail the answer', () => {
    const usage = (text: string) => scanJsonShape(b(text), 'choices')?.usage;
    expect(usage('{"choices":[{}],"usage":{"total_tokens":tru}}')).toEqual({});
    expect(usage('{"choices":[{}],"usage":{ "prompt_tokens" : 12 , "x":{"total_tokens":99},"note":"total_tokens","completion_tokens":1.5,"total_tokens":-1}}')).toEqual({ prompt_tokens: 12 });
    expect(usage('{"choices":[{}],"usage":{"details":{"prompt_tokens":5},"prompt_tokens":0,"completion_tokens":1,"total_tokens":1}}')).toEqual({ prompt_tokens: 0, completion_tokens: 1, total_tokens: 1 });
  });

  it('bounds nesting', () => {
    const deep = `{"choices":[{}],"x":${'['.repeat(300)}${']'.repeat(300)}}`;
    expect(scanJsonShape(b(deep), 'choices')).toBeUndefined();
  });
});
