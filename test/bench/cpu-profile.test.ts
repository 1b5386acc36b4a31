/**
 * `profile-summary.ts`'s arithmetic over V8 .cpuprofile samples: self time by
 * frame and by source, our functions' inclusive time (once a stack, however
 * deep the recursion), folded stacks, idle left out.
 */
import { describe, expect, it } from 'vitest';
import { label, origin, summarise, type Profile, type ProfileNode } from '../../bench/cpu-profile.js';

describe('origin', () => {
  it("groups our built code by its folder under dist/", () => {
    expect(origin('file:///work/main/dist/core/gateway.js', 'handle')).toBe('switchyard dist/core');
    expect(origin('file:///work/main/dist/index.js', 'x')).toBe('switchyard dist/index.js');
  });

  it('groups dependencies by package, scoped ones by scope and name, nested ones by the innermost', () => {
    expect(origin('file:///work/main/node_modules/undici/lib/dispatcher/client-h1.js', 'x')).toBe('undici');
    expect(origin('file:///work/main/node_modules/@hono/node-server/dist/index.js', 'x')).toBe('@hono/node-server');
    expect(origin('file:///w/node_modules/a/node_modules/b/index.js', 'x')).toBe('b');
  });

  it("groups node's own modules by their first segment", () => {
    expect(origin('node:internal/streams/readable', 'x')).toBe('node:internal');
    expect(origin('node:net', 'x')).toBe('node:net');
  });

  it('without a url: V8 pseudo-frames by name, anything else native', () => {
    expect(origin('', '(garbage collector)')).toBe('(garbage collector)');
    expect(origin('', 'JSON.parse')).toBe('(native)');
  });
});

const node = (id: number, functionName: string, url: string, lineNumber: number, children: number[] = []): ProfileNode => ({ id, callFrame: { functionName, url, lineNumber }, children });

describe('label', () => {
  it('names a frame `name file:line`, the line 1-based and the path cut at dist/ or node_modules/', () => {
    expect(label(node(1, 'handle', 'file:///work/main/dist/core/gateway.js', 119))).toBe('handle dist/core/gateway.js:120');
    expect(label(node(1, '', 'file:///w/node_modules/a/node_modules/b/i.js', 0))).toBe('(anonymous) node_modules/b/i.js:1');
    expect(label(node(1, 'emit', 'node:events', 516))).toBe('emit node:events:517');
  });
});

describe('summarise', () => {
  // (root) → a → b (undici); a → a (recursion) → c (node:internal); (root) → (idle)
  const A = 'file:///work/main/dist/core/a.js';
  const profile: Profile = {
    nodes: [
      node(1, '(root)', '', -1, [2, 6]),
      node(2, 'a', A, 9, [3, 4]),
      node(3, 'b', 'file:///work/main/node_modules/undici/lib/b.js', 0),
      node(4, 'a', A, 9, [5]),
      node(5, 'c', 'node:internal/timers', 4),
      node(6, '(idle)', '', -1),
    ],
    samples: [3, 3, 5, 6, 2],
    timeDeltas: [10, 20, 30, 40, 50],
  };

  it('sums self time by frame and by source, leaving idle out', () => {
    const s = summarise([profile], false);
    expect(s.total).toBe(110);
    expect(Object.fromEntries(s.self)).toEqual({ 'b node_modules/undici/lib/b.js:1': 30, 'c node:internal/timers:5': 30, 'a dist/core/a.js:10': 50 });
    expect(Object.fromEntries(s.bySource)).toEqual({ undici: 30, 'node:internal': 30, 'switchyard dist/core': 50 });
  });

  it("counts our function's inclusive time once a stack, however often it recurses", () => {
    // 30 under b, 30 under the recursive a → c (not 60), 50 of its own.
    expect(Object.fromEntries(summarise([profile], false).inclusiveOurs)).toEqual({ 'a dist/core/a.js:10': 110 });
  });

  it('folds stacks root first, only when asked', () => {
    expect(summarise([profile], false).folded.size).toBe(0);
    expect(Object.fromEntries(summarise([profile], true).folded)).toEqual({
      'a dist/core/a.js:10;b node_modules/undici/lib/b.js:1': 30,
      'a dist/core/a.js:10;a dist/core/a.js:10;c node:internal/timers:5': 30,
      'a dist/core/a.js:10': 50,
    });
  });

  it('adds up several profiles (one a path and round)', () => {
    const s = summarise([profile, profile], true);
    expect(s.total).toBe(220);
    expect(s.inclusiveOurs.get('a dist/core/a.js:10')).toBe(220);
    expect(s.folded.get('a dist/core/a.js:10')).toBe(100);
  });
});
