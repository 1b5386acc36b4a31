import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse.js';
import type { DataClass, KeyConfig } from '../config/types.js';
import { GatewayError } from '../core/errors.js';
import { effectiveDataClass, requiresLocal } from './privacy.js';

const CLASSES: DataClass[] = ['public', 'internal', 'confidential', 'restricted'];

describe('effectiveDataClass', () => {
  it('no header (or an empty one) keeps the floor', () => {
    for (const floor of CLASSES) {
      expect(effectiveDataClass(floor, undefined)).toBe(floor);
      expect(effectiveDataClass(floor, '')).toBe(floor);
    }
  });

  it('the header may raise the class but never lower it', () => {
    for (const [i, floor] of CLASSES.entries()) {
      for (const [j, asked] of CLASSES.entries()) {
        expect(effectiveDataClass(floor, asked)).toBe(j > i ? asked : floor);
      }
    }
  });

  it('is case- and whitespace-tolerant', () => {
    expect(effectiveDataClass('public', '  Confidential ')).toBe('confidential');
  });

  function refusal(value: string): GatewayError {
    let thrown: unknown;
    try {
      effectiveDataClass('public', value);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    return thrown as GatewayError;
  }

  it.each(['secret', 'toString', 'public,restricted', 'PUBLIC!'])('refuses %j with a 400 naming the header', (value) => {
    const e = refusal(value);
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_request', 'x-switchyard-data-class']);
    expect(e.message).toContain('public, internal, confidential, restricted');
  });

  // Regression (was a bug): `asked in RANK` also finds Object.prototype's own names, so these
  // (lower-case) values are accepted silently and the floor is kept, instead of a 400.
  it.each(['__proto__', 'constructor'])('refuses the inherited name %j too', (value) => {
    expect(refusal(value).status).toBe(400);
  });
});

describe('requiresLocal', () => {
  const keys: KeyConfig[] = parseConfig(
    {
      providers: [{ id: 'sim', type: 'simulated' }],
      keys: [
        { id: 'open', key: '${OPEN_KEY}' },
        { id: 'closed', key: '${CLOSED_KEY}', allowExternal: false },
        { id: 'secret', key: '${SECRET_KEY}', dataClass: 'restricted' },
      ],
    },
    { OPEN_KEY: 'k1', CLOSED_KEY: 'k2', SECRET_KEY: 'k3' },
  ).keys;
  const [open, closed, secret] = keys as [KeyConfig, KeyConfig, KeyConfig];

  it('confidential and restricted data stay local; public and internal may leave', () => {
    expect(CLASSES.map((c) => requiresLocal(c, null))).toEqual([false, false, true, true]);
    expect(CLASSES.map((c) => requiresLocal(c, open))).toEqual([false, false, true, true]);
  });

  it('a key with allowExternal: false keeps every request local', () => {
    expect(closed.allowExternal).toBe(false);
    expect(CLASSES.map((c) => requiresLocal(c, closed))).toEqual([true, true, true, true]);
  });

  it("a key's dataClass is a floor the header cannot lower", () => {
    expect(secret.dataClass).toBe('restricted');
    const cls = effectiveDataClass(secret.dataClass, 'public');
    expect(requiresLocal(cls, secret)).toBe(true);
    // Keys default to privacy.defaultDataClass (internal).
    expect(open.dataClass).toBe('internal');
  });
});
