import { describe, expect, it } from 'vitest';
import { interpolate } from './interpolate.js';

describe('interpolate', () => {
  it('replaces ${VAR} and ${VAR:-default} anywhere in the tree, map keys included, leaving non-strings alone', () => {
    const doc = {
      server: { host: '${HOST_X}', port: 4000 },
      providers: [{ id: 'p', baseUrl: 'https://${DOMAIN}/v1', headers: { '${HEADER:-x-team}': '${TOKEN:-anon}', '${N:-7}': 'x' } }],
      flags: [true, null, '${A}-${B:-b}'],
    };
    const r = interpolate(doc, { HOST_X: '0.0.0.0', DOMAIN: 'api.example.com', A: 'a' });
    expect(r.problems).toEqual([]);
    expect(r.value).toEqual({
      server: { host: '0.0.0.0', port: 4000 },
      // A key is text: '7' is not re-read as a number.
      providers: [{ id: 'p', baseUrl: 'https://api.example.com/v1', headers: { 'x-team': 'anon', '7': 'x' } }],
      flags: [true, null, 'a-b'],
    });
    expect(doc.server.host).toBe('${HOST_X}'); // input untouched
  });

  it('applies a default when the variable is unset or empty, and expands nested defaults', () => {
    const env = { EMPTY: '', INNER: 'inner' };
    const r = interpolate({ a: '${EMPTY:-d1}', b: '${NOPE:-${INNER:-x}}', c: '${NOPE:-${ALSO_NOPE:-deep}}', e: '${EMPTY}' }, env);
    expect(r.problems).toEqual([]);
    expect(r.value).toEqual({ a: 'd1', b: 'inner', c: 'deep', e: '' });
  });

  it('re-reads a string that was exactly one ${...} as a YAML scalar', () => {
    const r = interpolate(
      { port: '${PORT:-4000}', rpm: '${RPM:-null}', on: '${ON}', ratio: '${R:-0.5}', label: 'port ${PORT:-4000}', word: '${W:-hello}' },
      { ON: 'true' },
    );
    expect(r.value).toEqual({ port: 4000, rpm: null, on: true, ratio: 0.5, label: 'port 4000', word: 'hello' });
    expect(r.reread.get('port')).toBe('4000');
    expect(r.reread.has('label')).toBe(false);
    expect(r.reread.has('word')).toBe(false);
  });

  it('keeps text that YAML would change (comments, quotes, structure) as it is', () => {
    const env = { C: 'abc # not a comment', Q: '"quoted"', M: 'a: b', L: '[1, 2]' };
    const r = interpolate({ c: '${C}', q: '${Q}', m: '${M}', l: '${L}' }, env);
    expect(r.value).toEqual({ c: 'abc # not a comment', q: '"quoted"', m: 'a: b', l: '[1, 2]' });
  });

  it('names the variable and the path when a variable is unset and has no default', () => {
    const r = interpolate({ providers: [{ apiKey: '${OPENAI_API_KEY}' }], x: { y: '${A}${B}${A}' } }, {});
    expect(r.problems).toEqual([
      'providers[0].apiKey: environment variable OPENAI_API_KEY is not set',
      'x.y: environment variable A is not set',
      'x.y: environment variable B is not set',
    ]);
    expect([...r.failed]).toEqual(['providers[0].apiKey', 'x.y']);
  });

  it('tracks which strings came only from references (secrets must)', () => {
    const r = interpolate({ a: '${K}', b: 'sk-${K}', c: '${K}${K}', d: 'literal', e: '${NOPE:-dflt}' }, { K: 'v' });
    expect([...r.fromEnv].sort()).toEqual(['a', 'c', 'e']);
  });

  it('does not crash on stray dollars; $${ is a literal ${; malformed references are problems', () => {
    const r = interpolate({ a: 'price $5 and $', b: 'cost: $${HOME}', c: '${', d: '${1BAD}', e: '${OK:default}' }, {});
    expect(r.value).toMatchObject({ a: 'price $5 and $', b: 'cost: ${HOME}' });
    expect(r.problems).toEqual([
      'c: malformed variable reference (write ${NAME} or ${NAME:-default})',
      'd: malformed variable reference (write ${NAME} or ${NAME:-default})',
      'e: malformed variable reference (write ${NAME} or ${NAME:-default})',
    ]);
  });

  it('names a map key whose variable is unset, malformed, or that becomes another key', () => {
    const r = interpolate({ headers: { '${H}': 'a', '${bad': 'b', '${X:-x-a}': 'c', 'x-a': 'd' } }, {});
    expect(r.problems).toEqual([
      'headers["${H}"]: environment variable H is not set',
      'headers["${bad"]: malformed variable reference (write ${NAME} or ${NAME:-default})',
      "headers.x-a: names the same key as another after interpolation ('x-a')",
    ]);
  });

  it('keeps a __proto__ key a plain key', () => {
    const doc = JSON.parse('{"__proto__": {"polluted": "${X:-yes}"}}') as unknown;
    const r = interpolate(doc, {});
    expect(Object.getPrototypeOf(r.value)).toBe(Object.prototype);
    expect(Object.keys(r.value as object)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
