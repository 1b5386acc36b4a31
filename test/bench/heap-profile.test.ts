/** `bench:alloc`'s bytes a request by function, from V8's sampling heap profile tree. */
import { describe, expect, it } from 'vitest';
import { bytesByFunction, type ProfileNode } from '../../bench/heap-profile.js';

const n = (functionName: string, url: string, lineNumber: number, selfSize: number, children: ProfileNode[] = []): ProfileNode => ({
  callFrame: { functionName, url, lineNumber },
  selfSize,
  children,
});

describe('bytesByFunction', () => {
  const head = n('(root)', '', -1, 0, [
    n('handle', 'file:///work/main/dist/core/gateway.js', 119, 2048, [
      n('', 'file:///tmp/base/dist/core/json.js', 0, 1024),
      n('parse', '', -1, 2048),
      n('idle', 'file:///work/main/dist/core/idle.js', 3, 0),
    ]),
    // The same function reached by another stack.
    n('handle', 'file:///work/main/dist/core/gateway.js', 119, 1024),
    n('other', 'file:///elsewhere/dist/x.js', 4, 512),
  ]);
  const r = bytesByFunction(head, 4, ['/work/main/', '/tmp/base/']);

  it('sums self bytes a request by `name file:line` over every stack', () => {
    expect(Object.fromEntries(r.byFunction)).toEqual({
      // (2,048 + 1,024) / 4
      'handle dist/core/gateway.js:120': 768,
      // Either checkout's root is cut, so a baseline build's functions pair up with this one's.
      '(anonymous) dist/core/json.js:1': 256,
      // No file and no line: the name alone.
      parse: 512,
      // Not under a root: the path stays.
      'other /elsewhere/dist/x.js:5': 128,
    });
  });

  it('leaves out frames that allocated nothing, and totals the rest', () => {
    expect(r.byFunction.has('idle dist/core/idle.js:4')).toBe(false);
    expect(r.total).toBe(768 + 256 + 512 + 128);
  });
});
