/**
 * `bench:count --functions`: callgrind_annotate's per-function lines turned
 * into instructions a request by function, JIT addresses named from V8's
 * perf map. The annotate text below has the layout callgrind_annotate 3.19
 * prints (counts with thousands commas, a padded percentage, `file:function
 * [object]`).
 */
import { describe, expect, it } from 'vitest';
import { attribute, chargeToJs, functionTable, lookup, parsePerfMap, shortName } from '../../bench/count-functions.js';

describe('parsePerfMap', () => {
  it('reads START SIZE NAME in hex, keeps spaces in names, skips blank lines, sorts by start', () => {
    const ranges = parsePerfMap(
      ['7f0000002000 40 JS:*handle file:///w/dist/a.js:3:5', '', '7f0000001000 1a0 Builtin:JsonParse', '7f0000001000 10 JS:~later one'].join('\n'),
    );
    expect(ranges.map((r) => [r.start.toString(16), (r.end - r.start).toString(16), r.name])).toEqual([
      ['7f0000001000', '1a0', 'Builtin:JsonParse'],
      ['7f0000001000', '10', 'JS:~later one'],
      ['7f0000002000', '40', 'JS:*handle file:///w/dist/a.js:3:5'],
    ]);
    // The order written, counted over map lines only: what decides which of two overlapping entries is current.
    expect(ranges.map((r) => r.order)).toEqual([1, 2, 0]);
  });
});

describe('lookup', () => {
  const ranges = parsePerfMap(
    [
      '1000 100 old', // 0x1000–0x10ff, written first
      '1080 40 reused', // inside old's space, written later: V8 reused freed code space
      '2000 10 small',
      '1fff 800 big-later', // starts before `small`, covers it, written after it
    ].join('\n'),
  );

  it('finds the range that holds an address; its end is exclusive', () => {
    expect(lookup(ranges, 0x1000)).toBe('old');
    expect(lookup(ranges, 0x10ff)).toBe('old');
    expect(lookup(ranges, 0x1100)).toBeUndefined();
  });

  it('prefers the entry written last where two overlap', () => {
    expect(lookup(ranges, 0x1080)).toBe('reused');
    expect(lookup(ranges, 0x10bf)).toBe('reused');
    expect(lookup(ranges, 0x10c0)).toBe('old');
    // `small` starts nearer 0x2005 but `big-later` was written after it.
    expect(lookup(ranges, 0x2005)).toBe('big-later');
  });

  it('is undefined before the first range and in an empty map', () => {
    expect(lookup(ranges, 0x10)).toBeUndefined();
    expect(lookup([], 0x1000)).toBeUndefined();
  });
});

describe('shortName', () => {
  it("drops V8's tier mark, the checkout's path and the column", () => {
    expect(shortName('JS:*handle file:///work/main/dist/core/gateway.js:120:15')).toBe('handle dist/core/gateway.js:120');
    expect(shortName('JS:~handle file:///tmp/baseline/dist/core/gateway.js:120:9')).toBe('handle dist/core/gateway.js:120');
    expect(shortName('JS:^parse /work/main/node_modules/undici/lib/web/fetch/index.js:7:1')).toBe('parse node_modules/undici/lib/web/fetch/index.js:7');
    expect(shortName('JS:+frame file:///work/main/bench/mock-upstream.ts:48:1')).toBe('frame bench/mock-upstream.ts:48');
  });

  it("leaves node's own modules and V8's builtins as named", () => {
    expect(shortName('JS:~emit node:events:489:28')).toBe('emit node:events:489');
    expect(shortName('Builtin:JsonParse')).toBe('Builtin:JsonParse');
  });
});

describe('attribute', () => {
  const map = parsePerfMap(
    [
      '401000 200 JS:*handle file:///work/main/dist/core/gateway.js:120:15',
      '402000 100 JS:~handle file:///work/main/dist/core/gateway.js:120:15', // the same function, interpreted
      '403000 80 JS:^send file:///work/main/dist/server/http.js:40:3',
    ].join('\n'),
  );
  const longName = `v8::internal::${'VeryLongTemplate<'.repeat(8)}int${'>'.repeat(8)}::Run()`;
  const annotated = `--------------------------------------------------------------------------------
Profile data file 'switchyard.callgrind.4242.2' (creator: callgrind-3.19.0)
--------------------------------------------------------------------------------
Events recorded:  Ir
Thresholds:       100

--------------------------------------------------------------------------------
Ir                 
--------------------------------------------------------------------------------
9,999,999 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                 file:function
--------------------------------------------------------------------------------
3,000,000 (30.00%)  ???:main [/usr/bin/node]
2,000,000 (20.00%)  ???:node::SpinEventLoop(node::Environment*) [/usr/bin/node]
   50,000 ( 0.50%)  ???:0x0000000000401010 [???]
   10,000 ( 0.10%)  ???:0x0000000000402050 [???]
    3,000 ( 0.03%)  ???:0x0000000000403000 [???]
    2,500 ( 0.03%)  ???:0x0000000000500000 [???]
   20,000 ( 0.20%)  ./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:__memmove_avx_unaligned_erms [/usr/lib/x86_64-linux-gnu/libc.so.6]
    5,000 ( 0.05%)  ./elf/../sysdeps/generic/string-inlines.h:__memmove_avx_unaligned_erms
    7,000 ( 0.07%)  ???:Builtins_JsonParse [/usr/bin/node]
    4,000 ( 0.04%)  ???:v8::internal::Runtime_StringCharCodeAt(int, unsigned long*, v8::internal::Isolate*) [/usr/bin/node]
    1,000 ( 0.01%)  ???:${longName} [/usr/bin/node]
      900 ( 0.01%)  ???:(below main) [/usr/lib/x86_64-linux-gnu/libc.so.6]
`;

  it('gives instructions a request by function, named from the map or from callgrind', () => {
    const by = attribute(annotated, map, 100);
    expect(Object.fromEntries(by)).toEqual({
      // 50,000 optimised + 10,000 interpreted: one function, tier marks dropped.
      'handle dist/core/gateway.js:120': 600,
      'send dist/server/http.js:40': 30,
      '(JIT code not in the map)': 25,
      // The same libc function in two files (one inlined from a header): summed.
      __memmove_avx_unaligned_erms: 250,
      Builtins_JsonParse: 70,
      'v8::internal::Runtime_StringCharCodeAt(int, unsigned long*, v8::internal::Isolate*)': 40,
      [`${longName.slice(0, 107)}…`]: 10,
    });
  });

  it('leaves out the program total and the entry points whose counts hold everything', () => {
    const names = [...attribute(annotated, map, 1).keys()];
    for (const n of names) expect(n).not.toMatch(/PROGRAM TOTALS|^main$|SpinEventLoop|below main/);
  });

  it('cuts names longer than 110 characters to 107 and an ellipsis', () => {
    expect(longName.length).toBeGreaterThan(110);
    const cut = [...attribute(annotated, map, 1).keys()].find((n) => n.startsWith('v8::internal::Very'))!;
    expect(cut).toHaveLength(108);
    expect(cut.endsWith('…')).toBe(true);
  });
});

describe('chargeToJs', () => {
  const map = parsePerfMap(
    [
      '401000 200 JS:*handle file:///work/main/dist/core/gateway.js:120:15',
      '403000 80 JS:^send file:///work/main/dist/server/http.js:40:3',
      '404000 40 RegExp:[^\\t\\x20-\\x7e]',
    ].join('\n'),
  );
  // A --tree=caller listing: each function's callers (what their calls into it cost, inclusive), then its own count.
  const tree = `--------------------------------------------------------------------------------
Ir                    file:function
--------------------------------------------------------------------------------

3,000,000 (100.0%)  *  ???:main [/usr/bin/node]

    5,000 ( 0.50%)  < ???:main [/usr/bin/node]
    1,000 ( 0.10%)  *  ???:0x0000000000401010 [???]

      600 ( 0.06%)  < ???:0x0000000000401010 (10x) [???]
      300 ( 0.03%)  *  ???:0x0000000000403000 [???]

    1,500 ( 0.15%)  < ???:0x0000000000401010 (30x) [???]
      500 ( 0.05%)  < ???:0x0000000000403000 (10x) [???]
    2,000 ( 0.20%)  *  ???:Builtins_KeyedLoadIC_Megamorphic [/usr/bin/node]

      800 ( 0.08%)  < ???:Builtins_KeyedLoadIC_Megamorphic (20x) [/usr/bin/node]
      200 ( 0.02%)  < ???:0x0000000000404000 (5x) [???]
      400 ( 0.04%)  *  ???:v8::internal::Runtime_StringCharCodeAt(int, unsigned long*, v8::internal::Isolate*) [/usr/bin/node]

      700 ( 0.07%)  < ???:uv_run [/usr/bin/node]
      700 ( 0.07%)  *  ./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:__memmove_avx_unaligned_erms [/usr/lib/x86_64-linux-gnu/libc.so.6]

       50 ( 0.01%)  < ./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:__memmove_avx_unaligned_erms (1x) [/usr/lib/x86_64-linux-gnu/libc.so.6]
       50 ( 0.01%)  *  ???:uv_run [/usr/bin/node]
`;

  it("charges a builtin's own instructions to its JavaScript callers, by what their calls cost", () => {
    const by = Object.fromEntries(chargeToJs(tree, map, 1));
    // KeyedLoadIC (2,000 own) is called by handle for 1,500 and by send for 500: 3 to 1.
    // CharCodeAt (400 own) is called by KeyedLoadIC for 800 and by a regular expression for 200:
    // 320 passes on to KeyedLoadIC's callers (240 handle, 80 send), 80 to the regex.
    expect(by['handle dist/core/gateway.js:120']).toBeCloseTo(1000 + 1500 + 240);
    expect(by['send dist/server/http.js:40']).toBeCloseTo(300 + 500 + 80);
    expect(by['RegExp:[^\\t\\x20-\\x7e]']).toBeCloseTo(80);
    expect(by.Builtins_KeyedLoadIC_Megamorphic).toBeUndefined();
  });

  it('leaves native work that no JavaScript called where it is, and keeps the total', () => {
    const by = chargeToJs(tree, map, 1);
    // memmove under libuv, and libuv's own (round a native cycle), reach no JavaScript.
    expect(by.get('__memmove_avx_unaligned_erms')).toBeCloseTo(700);
    expect(by.get('uv_run')).toBeCloseTo(50);
    const total = [...by.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(1000 + 300 + 2000 + 400 + 700 + 50);
    expect([...by.keys()]).not.toContain('main');
  });
});

describe('functionTable', () => {
  it('lists the top entries, largest first, rounded with thousands commas', () => {
    const t = functionTable('Switchyard', new Map([['a', 100.4], ['b', 3000], ['c', 50]]), 2);
    const lines = t.split('\n');
    expect(lines).toContain('#### Switchyard: instructions a request by function (top 2)');
    expect(lines.filter((l) => l.startsWith('| ') && l.includes('`'))).toEqual(['|  3,000 | `b` |', '|  100 | `a` |']);
  });

  it('names the unit it is given (bench:alloc counts bytes)', () => {
    expect(functionTable('bare', new Map([['x', 1]]), 5, undefined, 'bytes')).toContain('| bytes | function |');
  });

  it('against a base: the largest differences either way, a name missing on one side counting 0', () => {
    const own = new Map([['a', 100], ['b', 300], ['d', 5]]);
    const base = new Map([['a', 150], ['b', 100], ['c', 400]]);
    const lines = functionTable('Switchyard', own, 3, { label: 'bare', counts: base }).split('\n');
    expect(lines).toContain('| difference | Switchyard | bare | function |');
    // c −400, b +200, a −50; d (+5) is fourth and left out.
    expect(lines.filter((l) => l.includes('`'))).toEqual(['| −400 |  0 |  400 | `c` |', '|  200 |  300 |  100 | `b` |', '| −50 |  100 |  150 | `a` |']);
  });
});
