import { describe, expect, it } from 'vitest';
import { parseTraceFilter } from './traces-api.js';

const parse = (qs: string) => parseTraceFilter(new URLSearchParams(qs));

describe('parseTraceFilter', () => {
  it('parses every filter', () => {
    expect(parse('fallbackUsed=true&routedProvider=openai&model=fast&status=503&keyId=team-a&since=1767225600000&limit=10')).toEqual({
      fallbackUsed: true,
      routedProvider: 'openai',
      model: 'fast',
      status: 503,
      keyId: 'team-a',
      since: 1767225600000,
      limit: 10,
    });
    expect(parse('fallbackUsed=false')).toEqual({ fallbackUsed: false });
    expect(parse('fallbackUsed=TRUE')).toEqual({ fallbackUsed: true });
  });

  it('accepts since as ISO 8601 (with or without zone, date only) or epoch ms', () => {
    expect(parse('since=2026-01-01T00:00:00Z')).toEqual({ since: Date.UTC(2026, 0, 1) });
    expect(parse('since=2026-01-01T01:30:00.250%2B01:00')).toEqual({ since: Date.UTC(2026, 0, 1, 0, 30, 0, 250) });
    // An unencoded `+` arrives as a space: still read as the offset.
    expect(parse('since=2026-01-01T01:30:00+01:00')).toEqual({ since: Date.UTC(2026, 0, 1, 0, 30) });
    expect(parse('since=2026-01-01T00:00:00-0230')).toEqual({ since: Date.UTC(2026, 0, 1, 2, 30) });
    expect(parse('since=2026-01-01')).toEqual({ since: Date.UTC(2026, 0, 1) });
    expect(parse('since=0')).toEqual({ since: 0 });
  });

  it('no parameters, and empty ones, mean no filter; unknown ones are ignored', () => {
    expect(parse('')).toEqual({});
    expect(parse('model=&status=&cachebust=1')).toEqual({});
  });

  it('clamps a limit above the maximum', () => {
    expect(parse('limit=5000')).toEqual({ limit: 1000 });
  });

  it.each([
    ['fallbackUsed=yes', 'fallbackUsed'],
    ['fallbackUsed=1', 'fallbackUsed'],
    ['status=abc', 'status'],
    ['status=99', 'status'],
    ['status=600', 'status'],
    ['status=200.5', 'status'],
    ['since=yesterday', 'since'],
    ['since=2026-13-45T99:00:00Z', 'since'],
    ['since=-5', 'since'],
    ['since=Mon, 01 Jan 2026 00:00:00 GMT', 'since'],
    ['limit=0', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=ten', 'limit'],
    ['limit=1.5', 'limit'],
    [`model=${'x'.repeat(300)}`, 'model'],
  ])('%s is refused with a message naming %s', (qs, param) => {
    const r = parse(qs);
    expect(r).toHaveProperty('error');
    expect((r as { error: string }).error).toMatch(new RegExp(`^${param}\\b`));
    expect((r as { param: string }).param).toBe(param); // the 400's `param`
  });

  it('refuses limit=0 without claiming an upper bound it does not enforce: 5000 is clamped, as docs/operations.md says (found by the docs audit)', () => {
    expect(parse('limit=5000')).toMatchObject({ limit: 1000 });
    const r = parse('limit=0') as { error: string };
    expect(r.error).toBe('limit must be a whole number of at least 1 (larger than 1000 gives 1000)');
  });
});
