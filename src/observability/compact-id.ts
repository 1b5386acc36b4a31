/**
 * Request ids as numbers: the gateway's own ids are lowercase UUIDs, and a
 * trace ring that kept each as a string promoted one more object per request
 * to the old space (it lives as long as the ring holds the record). Four
 * 32-bit words in a typed array hold it instead; the text is rebuilt on read.
 */
const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[97 + i] = 10 + i;
const DIGITS = '0123456789abcdef';
/** Where the hyphens are in `8-4-4-4-12`. */
const isHyphen = (i: number) => i === 8 || i === 13 || i === 18 || i === 23;

/** Writes the lowercase UUID `id` into out[at..at+3]; false (nothing written) for any other text. */
export function uuidToWords(id: string, out: Uint32Array, at: number): boolean {
  if (id.length !== 36) return false;
  let w0 = 0, w1 = 0, w2 = 0, w3 = 0;
  let n = 0;
  for (let i = 0; i < 36; i++) {
    const c = id.charCodeAt(i);
    if (isHyphen(i)) {
      if (c !== 45) return false;
      continue;
    }
    const v = c < 128 ? HEX[c]! : -1;
    if (v < 0) return false;
    if (n < 8) w0 = (w0 << 4) | v;
    else if (n < 16) w1 = (w1 << 4) | v;
    else if (n < 24) w2 = (w2 << 4) | v;
    else w3 = (w3 << 4) | v;
    n++;
  }
  out[at] = w0;
  out[at + 1] = w1;
  out[at + 2] = w2;
  out[at + 3] = w3;
  return true;
}

/** The UUID text of the words at words[at..at+3]. */
export function wordsToUuid(words: Uint32Array, at: number): string {
  let s = '';
  for (let k = 0; k < 4; k++) {
    const w = words[at + k]!;
    for (let shift = 28; shift >= 0; shift -= 4) {
      const pos = s.length;
      if (isHyphen(pos)) s += '-';
      s += DIGITS[(w >>> shift) & 15];
    }
  }
  return s;
}
