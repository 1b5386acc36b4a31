/**
 * ISO 8601 start times for traces, both ways, without a Date per request.
 * Formatting keeps the text up to the seconds for the current second
 * (formatting a Date is ~1 µs; requests finish interleaved, so caching the
 * last millisecond rarely hits) and takes the milliseconds from a table.
 * Parsing recognises that same canonical form against the same kind of
 * one-second cache, so a trace store can keep a number instead of a string.
 */
const MILLIS = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);
let lastSecond = Number.NaN;
let secondPrefix = '';
/**
 * The text isoTime made last, and its ms: a trace is formatted and then handed to the
 * ring, which reads its number back at once. That text is a rope (prefix + millis), and
 * reading its characters flattens it in a runtime call; the same string object is
 * recognised by identity instead.
 */
let lastMade = '';
let lastMadeMs = Number.NaN;

/** `Date#toISOString` of epoch ms (fractions dropped). */
export function isoTime(ms: number): string {
  const t = Math.floor(ms);
  const second = Math.floor(t / 1000);
  if (second !== lastSecond) {
    const iso = new Date(second * 1000).toISOString();
    secondPrefix = iso.slice(0, iso.length - 4); // up to and including the '.'
    lastSecond = second;
  }
  lastMade = secondPrefix + MILLIS[t - second * 1000]!;
  lastMadeMs = t;
  return lastMade;
}

let parsedPrefix = '';
let parsedSecondMs = 0;
const digit = (s: string, i: number) => s.charCodeAt(i) - 48;

/**
 * Epoch ms of `s` when `s` is exactly what `isoTime` makes of it (so the
 * number gives the same text back); NaN for any other text.
 */
export function isoTimeMs(s: string): number {
  if (s === lastMade) return lastMadeMs;
  const n = s.length;
  if (n >= 24 && s.charCodeAt(n - 1) === 90 /* Z */ && s.charCodeAt(n - 5) === 46 /* . */ && s.startsWith(parsedPrefix) && n === parsedPrefix.length + 4) {
    const a = digit(s, n - 4), b = digit(s, n - 3), c = digit(s, n - 2);
    if (a >= 0 && a <= 9 && b >= 0 && b <= 9 && c >= 0 && c <= 9) return parsedSecondMs + a * 100 + b * 10 + c;
  }
  const ms = Date.parse(s);
  if (!Number.isFinite(ms) || isoTime(ms) !== s) return Number.NaN;
  parsedPrefix = s.slice(0, n - 4);
  parsedSecondMs = ms - (((ms % 1000) + 1000) % 1000);
  return ms;
}
