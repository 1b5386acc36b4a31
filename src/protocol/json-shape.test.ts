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
    const counts = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, prompt_tokens_details: { cached_tokens: 1 } };
    for (const text of [compact, pretty]) expect(scanJsonShape(b(text), 'choices')).toStrictEqual({ usage: counts });
    expect(scanJsonShape(b('{"choices":[{}],"usage":null}'), 'choices')).toEqual({ usage: null });
    expect(scanJsonShape(b('\ufeff{"choices":[{}]}'), 'choices')).toEqual({ usage: null }); // a UTF-8 BOM, as a decoder would drop it
    expect(scanJsonShape(b('\ufeff\ufeff{"choices":[{}]}'), 'choices')).toBeUndefined();
    expect(scanJsonShape(b('{"choices":[{}]}'), 'choices')).toEqual({ usage: null });
    expect(scanJsonShape(b('{"data":[{"embedding":[0.1]}],"usage":{"prompt_tokens":2,"total_tokens":2}}'), 'data')).toEqual({
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
  });

  it("reads the prompt cache's hits from prompt_tokens_details only, as a count", () => {
    const usage = (u: string) => scanJsonShape(b(`{"choices":[{}],"usage":${u}}`), 'choices')!.usage;
    // OpenAI's full usage: the other details and their own cached_tokens-like keys are not the prompt's hits.
    expect(usage('{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"cached_tokens":7}}')).toStrictEqual({
      prompt_tokens: 2006,
      completion_tokens: 300,
      total_tokens: 2306,
      prompt_tokens_details: { cached_tokens: 1920 },
    });
    expect(usage('{"prompt_tokens":5,"cached_tokens":4}')).not.toHaveProperty('prompt_tokens_details');
    expect(usage('{"prompt_tokens":5,"x":{"cached_tokens":4}}')).not.toHaveProperty('prompt_tokens_details');
    expect(usage('{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":"4"}}')).not.toHaveProperty('prompt_tokens_details');
    expect(usage('{"prompt_tokens":5,"prompt_tokens_details":{"x":{"cached_tokens":4}}}')).not.toHaveProperty('prompt_tokens_details');
    expect(usage('{"prompt_tokens":5,"prompt_tokens_details":null}')).not.toHaveProperty('prompt_tokens_details');
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

  it("refuses bytes outside strings that JSON.parse refuses too: Python's NaN and Infinity, stray letters and control bytes", () => {
    const refused = [
      '{"choices":[{"logprobs":{"content":[{"logprob":-Infinity}]}}]}',
      '{"choices":[{"logprob":NaN}]}',
      '{"choices":[{"x":Infinity}]}',
      '{"choices":[{"x":undefined}]}',
      "{'choices':[{}]}",
      '{"choices":[{"x":\\"y"}]}',
      '{"choices":[{"x":1\u0001}]}',
      '{"choices":[{"x":\u00e9}]}',
    ];
    for (const text of refused) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(scanJsonShape(b(text), 'choices'), text).toBeUndefined();
    }
    // The same bytes inside strings, and every literal and number form outside them, pass.
    const kept = '{"choices":[{"t":"NaN Infinity \\u0001 é \'","a":[true,false,null,-1.5e+3,2E-2,0]}],"usage":{"total_tokens":3}}';
    expect(JSON.parse(kept)).toBeTruthy();
    expect(scanJsonShape(b(kept), 'choices')).toEqual({ usage: { total_tokens: 3 } });
  });

  it('refuses every truncation of a valid answer', () => {
    const text = b(JSON.stringify(completion));
    for (let end = 0; end < text.length; end++) expect(scanJsonShape(text.subarray(0, end), 'choices'), `cut at ${end}`).toBeUndefined();
  });

  it('reads only plain counts from usage, and a broken one does not fail the answer', () => {
    const usage = (text: string) => scanJsonShape(b(text), 'choices')?.usage;
    expect(usage('{"choices":[{}],"usage":{ "prompt_tokens" : 12 , "x":{"total_tokens":99},"note":"total_tokens","completion_tokens":1.5,"total_tokens":-1}}')).toEqual({ prompt_tokens: 12 });
    expect(usage('{"choices":[{}],"usage":{"details":{"prompt_tokens":5},"prompt_tokens":0,"completion_tokens":1,"total_tokens":1}}')).toEqual({ prompt_tokens: 0, completion_tokens: 1, total_tokens: 1 });
  });

  it('agrees with JSON.parse about repeated usage members: the last one wins, also when it is no count or no details object', () => {
    const usage = (u: string) => scanJsonShape(b(`{"choices":[{}],"usage":${u}}`), 'choices')!.usage;
    // What the client reads from these bytes (JSON.parse) is what the trace, the limits and the cost take.
    for (const u of [
      '{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":8},"prompt_tokens_details":{"audio_tokens":0}}',
      '{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":8},"prompt_tokens_details":null}',
      '{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":8},"prompt_tokens_details":3}',
      '{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":8,"cached_tokens":null}}',
      '{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":8,"cached_tokens":-1}}',
    ]) {
      expect(usage(u), u).toEqual({ prompt_tokens: 10 });
      expect(JSON.parse(u).prompt_tokens_details?.cached_tokens ?? null, u).not.toBe(8);
    }
    expect(usage('{"prompt_tokens":10,"prompt_tokens_details":{"cached_tokens":8},"prompt_tokens_details":{"cached_tokens":6}}')).toEqual({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 6 } });
    expect(usage('{"prompt_tokens":10,"completion_tokens":2,"prompt_tokens":"x","completion_tokens":1.5}')).toEqual({});
    // A string value spelled like the member is no member.
    expect(usage('{"prompt_tokens_details":{"cached_tokens":8},"note":"prompt_tokens_details","prompt_tokens":10}')).toEqual({ prompt_tokens: 10, prompt_tokens_details: { cached_tokens: 8 } });
  });

  it('reads a count written as JSON.parse reads the same whole number (5.0, 1e3), and no other number', () => {
    const usage = (u: string) => scanJsonShape(b(`{"choices":[{}],"usage":${u}}`), 'choices')!.usage;
    const u = '{"prompt_tokens":2000.0,"completion_tokens":1E2,"total_tokens":2.1e+3,"prompt_tokens_details":{"cached_tokens":15.00e2}}';
    expect(usage(u)).toEqual({ prompt_tokens: 2000, completion_tokens: 100, total_tokens: 2100, prompt_tokens_details: { cached_tokens: 1500 } });
    expect(usage(u)).toEqual(JSON.parse(u));
    expect(usage('{"prompt_tokens":1.5,"completion_tokens":15e-1,"total_tokens":1e400,"prompt_tokens_details":{"cached_tokens":1.25e1}}')).toEqual({});
    // However long: read without building an argument list or a number by hand.
    expect(usage(`{"prompt_tokens":${'1'.repeat(500_000)}.0,"completion_tokens":2}`)).toEqual({ completion_tokens: 2 });
  });

  it('refuses an answer JSON.parse refuses outside its strings: a broken number or literal, a missing or extra comma or colon', () => {
    for (const bad of [
      '{"choices":[{}],"usage":{"total_tokens":tru}}',
      '{"choices":[{}],"usage":{"total_tokens":1.e}}',
      '{"choices":[{}],"usage":{"total_tokens":1-}}',
      '{"choices":[{"a":[0.0123,-s.0456]}]}',
      '{"choices":[{"a":1.2.3}]}',
      '{"choices":[{"a":01}]}',
      '{"choices":[{"a":.5}]}',
      '{"choices":[{"a":+1}]}',
      '{"choices":[{"a":1 2}]}',
      '{"choices":[{"a":1}] "usage":null}',
      '{"choices":[{"a" 1}]}',
      '{"choices":[{"a"::1}]}',
      '{"choices":[{"a":1,}]}',
      '{"choices":[{},]}',
      '{"choices":[,{}]}',
      '{,"choices":[{}]}',
      '{"choices":[{}],}',
      '{"choices":[{"a":nul}]}',
      '{"choices":[{"a":truex}]}',
      '{"choices":[{"a":"x" "b"}]}',
      '{"choices":[{"a"}]}',
      '{"choices":[{1:2}]}',
      '{"choices":[{}]:1}',
      '{"choices":[{"a":[1,2}]}',
    ]) {
      expect(() => JSON.parse(bad), bad).toThrow();
      expect(scanJsonShape(b(bad), 'choices'), bad).toBeUndefined();
    }
  });

  it('agrees with JSON.parse on every byte outside the strings of an answer changed to any other', () => {
    // An upstream's answer with one byte flipped is forwarded only if the client's parser reads it.
    const valid = (text: string) => {
      try {
        const v = JSON.parse(text) as { choices?: unknown };
        const first = Array.isArray(v?.choices) ? v.choices[0] : undefined;
        return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof first === 'object' && first !== null && !Array.isArray(first);
      } catch {
        return false;
      }
    };
    const answer = JSON.stringify({ ...completion, choices: [{ ...completion.choices[0], logprobs: null, n: [-1.5e3, 0, 2.25, true, false] }] });
    for (const text of [answer, JSON.stringify(JSON.parse(answer), null, 1)]) {
      // The offsets outside strings.
      const outside: number[] = [];
      for (let i = 0, inString = false; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else outside.push(i);
      }
      for (const at of outside) {
        for (const ch of ' \n,:{}[]"0123456789.eE+-truefalsnNIx') {
          const changed = text.slice(0, at) + ch + text.slice(at + 1);
          expect(scanJsonShape(b(changed), 'choices') !== undefined, changed).toBe(valid(changed));
        }
      }
    }
  });

  it('bounds nesting', () => {
    const deep = `{"choices":[{}],"x":${'['.repeat(300)}${']'.repeat(300)}}`;
    expect(scanJsonShape(b(deep), 'choices')).toBeUndefined();
  });
});

describe('scanJsonShape counting the items of its array', () => {
  const count = (text: string, expected: number) => {
    const shape = scanJsonShape(b(text), 'data', expected);
    return shape && { items: shape.items, itemsFit: shape.itemsFit };
  };
  /** An item whose `index` is written as given: a number, or the raw text of a JSON value. */
  const item = (index: number | string, rest = '"embedding":[0.5,-1]') => `{"object":"embedding","index":${index},${rest}}`;
  const answer = (...items: string[]) => `{"object":"list","data":[${items.join(',')}],"model":"e","usage":{"prompt_tokens":2,"total_tokens":2}}`;

  it('counts the items and checks their indexes cover 0..n-1 once each, in any order', () => {
    expect(count(answer(item(0), item(1)), 2)).toEqual({ items: 2, itemsFit: true });
    expect(count(answer(item(1), item(0)), 2)).toEqual({ items: 2, itemsFit: true });
    expect(count(answer(item(0)), 2)).toEqual({ items: 1, itemsFit: true });
    expect(count(answer(item(0), item(1), item(2)), 2)).toEqual({ items: 3, itemsFit: false });
    // An item without an index is read by its position.
    expect(count(answer('{"embedding":[1]}', '{"embedding":[2]}'), 2)).toEqual({ items: 2, itemsFit: true });
    expect(count(answer('{"embedding":[1]}', item(1)), 2)).toEqual({ items: 2, itemsFit: true });
    // ... so an index naming its position elsewhere, before or after it, is a repeat.
    expect(count(answer(item(1), '{"embedding":[2]}'), 2)).toEqual({ items: 2, itemsFit: false });
    expect(count(answer('{"embedding":[1]}', item(0)), 2)).toEqual({ items: 2, itemsFit: false });
    // The usage is read as without counting; the chat scan's answer has no count at all.
    expect(scanJsonShape(b(answer(item(0))), 'data', 1)).toEqual({ usage: { prompt_tokens: 2, total_tokens: 2 }, items: 1, itemsFit: true });
    expect(Object.keys(scanJsonShape(b(answer(item(0))), 'data')!)).toEqual(['usage']);
  });

  it('refuses an index repeated, out of range or not a plain integer', () => {
    const bad: (number | string)[][] = [[0, 0], [0, 2], [1, 1], ['"0"', 1], [-1, 0], [0, '1.5'], [0, '1e0'], ['null', 0], ['{"a":1}', 1], ['[0]', 1], [0, '12345678901234567890']];
    for (const indexes of bad) {
      const text = answer(...indexes.map((x) => item(x)));
      expect(count(text, 2), text).toEqual({ items: 2, itemsFit: false });
    }
  });

  it('refuses an item that is not an object after the first', () => {
    for (const rest of ['null', '5', '"x"', '[0.5]', 'true']) {
      expect(count(answer(item(0), rest), 2)?.itemsFit, rest).toBe(false);
    }
  });

  it('is not fooled by brackets, quotes and keys inside strings, or by nesting', () => {
    const tricky = item(0, '"note":"a ] } [ { , \\"index\\": 7, \\\\","embedding":[0.5,-1]');
    expect(count(answer(tricky, item(1)), 2)).toEqual({ items: 2, itemsFit: true });
    // Nested arrays and objects, and `index` members deeper than an item's own, are not items or indexes.
    const nested = item(1, '"embedding":[[1,2],[3,[4]]],"meta":{"index":9,"parts":[{"index":9},{"index":"x"}]}');
    expect(count(answer(item(0), nested), 2)).toEqual({ items: 2, itemsFit: true });
    // A value spelled "index" is no key.
    expect(count(answer(item(0, '"kind":"index","embedding":"AAAA"')), 1)).toEqual({ items: 1, itemsFit: true });
    // Only the top-level `data` is counted; of repeats, the last.
    expect(count(`{"x":{"data":[{},{},{}]},"note":"\\"data\\":[{},{}]","data":[${item(0)}]}`, 1)).toEqual({ items: 1, itemsFit: true });
    expect(count(`{"data":[${item(0)},${item(1)}],"data":[${item(0)}]}`, 1)).toEqual({ items: 1, itemsFit: true });
  });

  it('reads the same however the answer is spaced', () => {
    const value = { object: 'list', data: [0, 1, 2].map((index) => ({ object: 'embedding', index, embedding: [0.5, -1, 'x"]'] })), usage: { prompt_tokens: 3 } };
    for (const text of [JSON.stringify(value), `\r\n ${JSON.stringify(value, null, 4)} \n`, JSON.stringify(value, null, '\t')]) {
      expect(count(text, 3), text).toEqual({ items: 3, itemsFit: true });
      expect(count(text, 4), text).toEqual({ items: 3, itemsFit: true });
      expect(count(text, 2), text).toEqual({ items: 3, itemsFit: false }); // index 2 is out of range for 2
    }
    expect(count('{"data" :\n[ {"index" : 0 } ,\n\t{ "index"\n:\n1} ] }', 2)).toEqual({ items: 2, itemsFit: true });
  });

  it('still refuses what is not a whole answer with items', () => {
    for (const text of ['{"data":[]}', '{"data":[ ]}', '{"data":[null]}', '{"data":{}}', answer(item(0)).slice(0, -1), '{"data":[{"index":0]}']) {
      expect(scanJsonShape(b(text), 'data', 1), text).toBeUndefined();
    }
  });
});
