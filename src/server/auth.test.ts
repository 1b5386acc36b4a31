import { describe, expect, it } from 'vitest';
import { presentedKey } from './auth.js';

describe('presentedKey', () => {
  it('reads the Bearer key however it is spaced or cased, else x-api-key', () => {
    const cases: [Record<string, string | string[]>, string | undefined][] = [
      [{ authorization: 'Bearer sk-1' }, 'sk-1'],
      [{ authorization: 'bearer sk-1' }, 'sk-1'],
      [{ authorization: 'BEARER   sk-1  ' }, 'sk-1'],
      [{ authorization: '  Bearer\tsk-1' }, 'sk-1'],
      [{ authorization: 'Bearer sk-1\u00a0' }, 'sk-1'],
      [{ authorization: 'Bearer a b' }, 'a b'],
      [{ authorization: 'Bearer' }, undefined],
      [{ authorization: 'Bearer ', 'x-api-key': 'sk-x' }, 'sk-x'],
      [{ authorization: 'Basic abc', 'x-api-key': 'sk-x' }, 'sk-x'],
      [{ 'x-api-key': ['sk-a', 'sk-b'] }, 'sk-a'],
      [{}, undefined],
    ];
    for (const [headers, want] of cases) expect(presentedKey(headers), JSON.stringify(headers)).toBe(want);
  });
});
