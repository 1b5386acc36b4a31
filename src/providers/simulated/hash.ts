/**
 * Tiny deterministic hashing: simulated embeddings must be the same vector for
 * the same input on every run (seeded from the input's hash, core/clock.ts
 * seededRandom).
 */

/** 32-bit FNV-1a over UTF-16 code units. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
