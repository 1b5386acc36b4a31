/**
 * Request ids as numbers: the gateway's own ids are lowercase UUIDs, and a
 * trace ring that kept each as a string promoted one more object per request
 * to the old space (it lives as long as the ring holds the record). Four
 * 32-bit words in a typed array hold it instead; the text is rebuilt on read.
 * The gateway makes its ids here too (newUuid), words first, so the ring
 * never has to parse one back.
 */
import { randomFillSync } from 'node:crypto';

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;
const DIGITS = '0123456789abcdef';

const hex = (s: string, i: number): number => {
  const c = s.charCodeAt(i);
  return c < 128 ? HEX[c]! : -1;
};
/** Four hex digits at i as a number, or negative when any is not one. */
const hex4 = (s: string, i: number): number => {
  const a = hex(s, i), b = hex(s, i + 1), c = hex(s, i + 2), d = hex(s, i + 3);
  return (a | b | c | d) < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
};

/** Writes the lowercase UUID `id` into out[at..at+3]; false (nothing written) for any other text. */
export function uuidToWords(id: string, out: Uint32Array, at: number): boolean {
  if (id.length !== 36 || id.charCodeAt(8) !== 45 || id.charCodeAt(13) !== 45 || id.charCodeAt(18) !== 45 || id.charCodeAt(23) !== 45) return false;
  const g0 = hex4(id, 0), g1 = hex4(id, 4), g2 = hex4(id, 9), g3 = hex4(id, 14);
  const g4 = hex4(id, 19), g5 = hex4(id, 24), g6 = hex4(id, 28), g7 = hex4(id, 32);
  if ((g0 | g1 | g2 | g3 | g4 | g5 | g6 | g7) < 0) return false;
  out[at] = (g0 << 16) | g1;
  out[at + 1] = (g2 << 16) | g3;
  out[at + 2] = (g4 << 16) | g5;
  out[at + 3] = (g6 << 16) | g7;
  return true;
}

/** The UUID text of the words at words[at..at+3]. */
export function wordsToUuid(words: Uint32Array, at: number): string {
  return uuidText(words[at]!, words[at + 1]!, words[at + 2]!, words[at + 3]!);
}

/** Random words for ids, refilled 256 ids at a time (one call into the CSPRNG, as node's randomUUID batches). */
const pool = new Uint32Array(4 * 256);
let poolAt = pool.length;
/** A UUID's text is written here and read out once: a flat string, where joining 20 pieces made a rope to flatten later. */
const text = Buffer.alloc(36, 0x2d); // '-' where the hyphens go
const DIGIT_BYTES = Buffer.from(DIGITS, 'latin1');

/** Eight hex digits of `w` at text[at..at+7], skipping the hyphen at `hyphen` (-1: none). */
function putHex(w: number, at: number, hyphen: number): void {
  for (let k = at + 7 + (hyphen === -1 ? 0 : 1); k >= at; k--) {
    if (k === hyphen) continue;
    text[k] = DIGIT_BYTES[w & 15]!;
    w >>>= 4;
  }
}

/** 8-4-4-4-12: w0 | w1 (hyphen at 13) | w2 (hyphen at 23) | w3. */
function uuidText(w0: number, w1: number, w2: number, w3: number): string {
  putHex(w0, 0, -1);
  putHex(w1, 9, 13);
  putHex(w2, 19, 23);
  putHex(w3, 28, -1);
  return text.toString('latin1', 0, 36);
}

/**
 * A fresh random UUID (version 4, as `crypto.randomUUID` makes), its four
 * words written to `words` (index 0–3) when given. The gateway makes an id for
 * every request without one and the trace ring stores it as these words:
 * handing them over saves parsing the text back (randomUUID, then
 * uuidToWords on its rope of a string: ~0.65 µs a request; this: ~0.17 µs).
 */
export function newUuid(words?: number[]): string {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const w0 = pool[poolAt]!;
  const w1 = ((pool[poolAt + 1]! & 0xffff0fff) | 0x4000) >>> 0; // version 4
  const w2 = ((pool[poolAt + 2]! & 0x3fffffff) | 0x80000000) >>> 0; // variant 10
  const w3 = pool[poolAt + 3]!;
  poolAt += 4;
  if (words !== undefined) {
    words[0] = w0;
    words[1] = w1;
    words[2] = w2;
    words[3] = w3;
  }
  return uuidText(w0, w1, w2, w3);
}
