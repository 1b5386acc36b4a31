import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newUuid, uuidToWords, wordsToUuid } from './compact-id.js';

describe('uuid words', () => {
  it('round-trips lowercase UUIDs, at any offset', () => {
    const out = new Uint32Array(12);
    for (const id of [randomUUID(), randomUUID(), '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0123abcd-4567-89ef-0123-456789abcdef']) {
      expect(uuidToWords(id, out, 4)).toBe(true);
      expect(wordsToUuid(out, 4)).toBe(id);
    }
  });

  it('refuses anything else and writes nothing', () => {
    const out = new Uint32Array(4).fill(7);
    for (const id of ['', 'r1', '0123ABCD-4567-89ef-0123-456789abcdef', '0123abcd-4567-89ef-0123-456789abcdeg', '0123abcd_4567-89ef-0123-456789abcdef', '0123abcd-4567-89ef-0123-456789abcdef0', '0123abcd-4567-89ef-0123-456789abcdé']) {
      expect(uuidToWords(id, out, 0), id).toBe(false);
    }
    expect([...out]).toEqual([7, 7, 7, 7]);
  });

  it('makes version-4 UUIDs whose words are those of the text, distinct across pool refills', () => {
    const seen = new Set<string>();
    const parsed = new Uint32Array(4);
    for (let i = 0; i < 1000; i++) {
      const words: number[] = [];
      const id = newUuid(words);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(uuidToWords(id, parsed, 0)).toBe(true);
      expect(words).toEqual([...parsed]);
      seen.add(id);
    }
    expect(seen.size).toBe(1000); // 1,000 ids span four refills of the 256-id pool
    expect(newUuid()).toMatch(/^[0-9a-f-]{36}$/);
  });
});
