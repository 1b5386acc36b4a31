/**
 * The shape of a 2xx JSON answer that is forwarded byte for byte, checked
 * without building it: one pass over the bytes tracks strings (escapes
 * included) and bracket nesting, and notes where two top-level members start
 * and end; the three counts of the `usage` member are then read in place.
 *
 * Why not JSON.parse: an OpenAI-compatible answer goes to the client as the
 * upstream sent it, so the gateway needs only its usage (cost, token limits,
 * trace) and the assurance that it is a whole JSON object carrying the
 * expected array — not a tree of objects thrown away a microsecond later.
 * Parsing the whole answer was the gateway's single largest cost on a
 * buffered request. The full parse stays available (`parse`) for callers of
 * the in-process API who read the body.
 *
 * What the scan proves: the bytes are one object whose brackets and strings
 * are balanced and properly closed, with nothing but whitespace around it,
 * its top level has `field` holding an array whose first item is an
 * object, and everything outside its strings follows JSON's grammar (commas,
 * colons, member names, numbers and the three literals where they may stand)
 * — what a client's JSON.parse reads outside strings, the scan reads. That keeps
 * Python's `NaN`, `Infinity` and `-Infinity` (json.dumps writes them for a float
 * that is one, as a server's logprob of -inf) and an answer with a byte flipped
 * (`-s.0456`, a missing comma) from reaching a client whose parser throws on them:
 * the attempt fails over instead. Inside strings only the escapes that end one are
 * read; a raw control character there still passes. A truncated, HTML, empty or
 * error-shaped answer is refused.
 *
 * Asked how many items to expect (embeddings: one vector per input), the same
 * pass also counts the array's items and reads each one's `index`: a client
 * pairs vectors with its inputs by position or by index, so an answer short of
 * a vector, or with an index repeated or out of range, would pair them wrongly.
 * The count costs the chat scan a test of a flag that stays false at each
 * bracket and nested key: the work happens inside the counted array only.
 */
import type { Usage } from './openai.js';

export interface JsonShape {
  /** The counts of the top-level `usage` member; null when absent or not an object. */
  usage: Usage | null;
  /** Only when items were expected: the items of `field`'s array that are objects (all its items when `itemsFit`). */
  items?: number;
  /**
   * Only when items were expected: every item is an object, and every `index` member one
   * of them carries is a distinct integer below the expected count. An item without an
   * `index` is read by its position, as clients read it.
   */
  itemsFit?: boolean;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
/** Deeper than any real answer; bounds the bracket stack. */
const MAX_DEPTH = 256;
/**
 * The closing bracket each open level expects. One stack for every scan: a
 * scan runs to its end synchronously, so no two overlap, and an array grown
 * by push from empty on every answer cost an allocation and two growths.
 */
const closers = new Uint8Array(MAX_DEPTH);

/**
 * The grammar's states between two tokens outside strings: a value may start (after a colon
 * or a comma in an array; and after an opening `[`, where a close may come instead), a member
 * name may start (after a comma in an object; after `{`, or its close), a colon must come, or
 * a comma or a close must (after a value). Ordered so that "a value may start" is `<= S_VALUE_OR_CLOSE`.
 */
const S_VALUE = 0;
const S_VALUE_OR_CLOSE = 1;
const S_KEY = 2;
const S_KEY_OR_CLOSE = 3;
const S_COLON = 4;
const S_AFTER_VALUE = 5;

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;

/**
 * The offset just past the number or literal (`true`, `false`, `null`) starting at `i`, or -1
 * when none starts there: JSON's number grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
 * What may follow it is the caller's to check (a comma, a close or whitespace).
 */
function scalarEnd(b: Uint8Array, i: number): number {
  const c = b[i]!;
  // Byte by byte, no loop over a word: this runs for every number and literal of an answer.
  if (c === 0x6e) return b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c ? i + 4 : -1; // null
  if (c === 0x74) return b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65 ? i + 4 : -1; // true
  if (c === 0x66) return b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65 ? i + 5 : -1; // false
  let j = c === 0x2d ? i + 1 : i;
  if (b[j] === 0x30) j++;
  else if (isDigit(b[j])) while (isDigit(b[j])) j++;
  else return -1;
  if (b[j] === 0x2e) {
    if (!isDigit(b[++j])) return -1;
    while (isDigit(b[j])) j++;
  }
  if (b[j] === 0x65 || b[j] === 0x45) {
    j++;
    if (b[j] === 0x2b || b[j] === 0x2d) j++;
    if (!isDigit(b[j])) return -1;
    while (isDigit(b[j])) j++;
  }
  return j;
}

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Index of the quote closing the string whose opening quote is at `open`, or -1. */
function stringEnd(b: Uint8Array, open: number): number {
  let i = open;
  for (;;) {
    i = b.indexOf(QUOTE, i + 1);
    if (i === -1) return -1;
    // Escaped when preceded by an odd number of backslashes.
    let k = i - 1;
    while (b[k] === BACKSLASH) k--;
    if ((i - 1 - k) % 2 === 0) return i;
  }
}

/** True when the bytes from..to are exactly the ASCII `name`. */
function keyIs(b: Uint8Array, from: number, to: number, name: string): boolean {
  if (to - from !== name.length) return false;
  for (let j = 0; j < name.length; j++) if (b[from + j] !== name.charCodeAt(j)) return false;
  return true;
}

/**
 * Whether the value starting at `i` (after whitespace) is an object: the first item of
 * `field`'s array must be one. A 200 with `"choices": []` or `[null]` (some
 * OpenAI-compatible servers send them in place of an error) carries no answer, and
 * forwarded, it broke every client reading `choices[0].message` while another
 * candidate could have answered.
 */
function opensObject(b: Uint8Array, i: number): boolean {
  while (i < b.length && isWs(b[i]!)) i++;
  return b[i] === OPEN_OBJ;
}

/**
 * Checks `b` is a JSON object whose top level has `field` as an array that
 * starts with an object, and returns its usage; undefined when it is not (the
 * caller's malformed answer). With `expected`, also how many items the array
 * holds and whether they fit (JsonShape).
 */
export function scanJsonShape(b: Uint8Array, field: string, expected?: number): JsonShape | undefined {
  const n = b.length;
  // A UTF-8 byte order mark is allowed, as a decoder would drop it.
  let i = b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  while (i < n && isWs(b[i]!)) i++;
  if (b[i] !== OPEN_OBJ) return undefined;
  let depth = 0;
  let hasField = false;
  let usageFrom = -1;
  let usageTo = -1;
  // Counting only (never set on the chat path): inside `field`'s array, its items at depth 2.
  let inField = false;
  let items = 0;
  let fit = true;
  // Which indexes the current `field` array has named: slot v holds `gen` when it has. One
  // array a scan, a new generation for each repeat of the member: a hostile answer of
  // millions of `"data":[{}]` members allocated and zeroed one each, and blocked the event
  // loop for seconds.
  let seen: Uint32Array | undefined;
  let gen = 0;
  let indexed = false; // the item being scanned carried its `index`
  /** What the grammar lets come next (the S_ constants): the answer must be JSON as a client's parser reads it. */
  let state = S_VALUE;
  for (; i < n; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i);
      if (end === -1) return undefined;
      if (state === S_KEY || state === S_KEY_OR_CLOSE) {
        // A member name: a colon follows.
        if (depth === 1) {
          let j = end + 1;
          while (j < n && isWs(b[j]!)) j++;
          if (b[j] !== COLON) return undefined;
          const key = keyIs(b, i + 1, end, field) ? 1 : keyIs(b, i + 1, end, 'usage') ? 2 : 0;
          j++;
          while (j < n && isWs(b[j]!)) j++;
          // A repeated member counts as JSON.parse would read it: the last one wins.
          if (key === 1) {
            hasField = b[j] === OPEN_ARR && opensObject(b, j + 1);
            if (expected !== undefined) {
              inField = hasField;
              items = 0;
              fit = true;
              seen ??= new Uint32Array(expected);
              gen++;
            }
          } else if (key === 2) {
            usageFrom = b[j] === OPEN_OBJ ? j : -1;
            usageTo = -1;
          }
          i = j - 1; // the value is scanned next
          state = S_VALUE;
          continue;
        }
        if (inField && depth === 3 && keyIs(b, i + 1, end, 'index')) {
          // An item's `index` member.
          let j = end + 1;
          while (j < n && isWs(b[j]!)) j++;
          if (b[j] !== COLON) return undefined;
          j = indexAfter(b, j + 1, seen!, gen);
          if (j !== -1) {
            indexed = true;
            i = j - 1;
            state = S_AFTER_VALUE;
            continue;
          }
          fit = false; // and the value is scanned on as any value is
        }
        state = S_COLON;
      } else if (state <= S_VALUE_OR_CLOSE) state = S_AFTER_VALUE;
      else return undefined;
      i = end;
    } else if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (state > S_VALUE_OR_CLOSE || depth === MAX_DEPTH) return undefined;
      // The array's first item is an object (hasField says so); each after one is checked at its close.
      if (inField && depth === 2) {
        items++;
        indexed = false;
      }
      closers[depth++] = c === OPEN_OBJ ? CLOSE_OBJ : CLOSE_ARR;
      state = c === OPEN_OBJ ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE;
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      // After a value, or at once: `{}`, `[]`.
      if (state !== S_AFTER_VALUE && state !== (c === CLOSE_OBJ ? S_KEY_OR_CLOSE : S_VALUE_OR_CLOSE)) return undefined;
      if (depth === 0 || closers[--depth] !== c) return undefined;
      state = S_AFTER_VALUE;
      if (inField) {
        if (depth === 1) inField = false;
        else if (depth === 2) {
          // An item without an `index` is read by its position: that slot is taken too, so an
          // index elsewhere naming it (before or after) is a repeat.
          if (!indexed) {
            const at = items - 1;
            if (at >= seen!.length || seen![at] === gen) fit = false;
            else seen![at] = gen;
          }
          if (!nextItemIsObject(b, i + 1)) fit = false;
        }
      }
      if (depth === 1 && usageFrom !== -1 && usageTo === -1) usageTo = i + 1;
      if (depth === 0) {
        for (let j = i + 1; j < n; j++) if (!isWs(b[j]!)) return undefined;
        if (!hasField) return undefined;
        if (expected === undefined) return { usage: usageOf(b, usageFrom, usageTo) };
        return { usage: usageOf(b, usageFrom, usageTo), items, itemsFit: fit };
      }
    } else if (c === COMMA) {
      if (state !== S_AFTER_VALUE) return undefined;
      state = closers[depth - 1] === CLOSE_OBJ ? S_KEY : S_VALUE;
    } else if (c === COLON) {
      if (state !== S_COLON) return undefined;
      state = S_VALUE;
    } else if (!isWs(c)) {
      // A number or a literal, whole: `tru`, `1.2.3`, `NaN` and a byte flipped into one end the scan.
      if (state > S_VALUE_OR_CLOSE) return undefined;
      const end = scalarEnd(b, i);
      if (end === -1) return undefined;
      i = end - 1;
      state = S_AFTER_VALUE;
    }
  }
  return undefined; // never closed: truncated
}

/**
 * After an item of the counted array closes at `i`: true when the array ends there or its
 * next item is an object too (a null, a number or a string among the vectors is no vector).
 */
function nextItemIsObject(b: Uint8Array, i: number): boolean {
  while (i < b.length && isWs(b[i]!)) i++;
  if (b[i] !== COMMA) return true;
  return opensObject(b, i + 1);
}

/**
 * Reads the `index` value starting at `i` (after whitespace) and marks it in `seen` (as `gen`);
 * returns the offset just after it, or -1 when it is not a plain integer below `seen.length` or
 * was seen before.
 */
function indexAfter(b: Uint8Array, i: number, seen: Uint32Array, gen: number): number {
  while (i < b.length && isWs(b[i]!)) i++;
  const start = i;
  let v = 0;
  for (; b[i]! >= 0x30 && b[i]! <= 0x39; i++) if ((v = v * 10 + (b[i]! - 0x30)) >= seen.length) return -1;
  const after = b[i];
  if (i === start || !(after === COMMA || after === CLOSE_OBJ || isWs(after!)) || seen[v] === gen) return -1;
  seen[v] = gen;
  return i;
}

const DOT = 0x2e;

/** The offset just past a number's fraction and exponent bytes, from `j`. */
function numberEnd(b: Uint8Array, j: number): number {
  for (; (b[j]! >= 0x30 && b[j]! <= 0x39) || b[j] === DOT || b[j] === 0x65 || b[j] === 0x45 || b[j] === 0x2b || b[j] === 0x2d; j++);
  return j;
}

/** The number spelled by the bytes from..to when it is a whole non-negative one (as JSON.parse reads it), else NaN. */
function wholeNumber(b: Uint8Array, from: number, to: number): number {
  const v = Number(Buffer.from(b.buffer, b.byteOffset + from, to - from).toString('latin1'));
  return Number.isInteger(v) && v >= 0 ? v : Number.NaN;
}

/**
 * The three counts of the usage object spanning from..to, read in place, and
 * `prompt_tokens_details.cached_tokens` and `cache_creation_input_tokens` (a
 * LiteLLM proxy's count of Anthropic's cache writes) when there (the gateway
 * needs nothing else of it: cost, token limits and the trace take these; cache
 * hits and writes may have prices of their own). A count that is not a whole non-negative number
 * (as JSON.parse reads it: 5.0 is one) is left out; of a repeated member, the
 * last one is read.
 */
function usageOf(b: Uint8Array, from: number, to: number): Usage | null {
  if (from === -1 || to === -1) return null;
  let prompt: number | undefined;
  let completion: number | undefined;
  let total: number | undefined;
  let cached: number | undefined;
  let written: number | undefined;
  let depth = 0;
  /** The depth-2 object being read is `prompt_tokens_details`: set on its key, cleared when the next depth-1 key comes. */
  let inDetails = false;
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c === OPEN_OBJ || c === OPEN_ARR) depth++;
    else if (c === CLOSE_OBJ || c === CLOSE_ARR) depth--;
    else if (c === QUOTE) {
      const end = stringEnd(b, i);
      let which = 0;
      if (depth === 1) {
        which = keyIs(b, i + 1, end, 'prompt_tokens') ? 1 : keyIs(b, i + 1, end, 'completion_tokens') ? 2 : keyIs(b, i + 1, end, 'total_tokens') ? 3 : keyIs(b, i + 1, end, 'prompt_tokens_details') ? 5 : keyIs(b, i + 1, end, 'cache_creation_input_tokens') ? 6 : 0;
        inDetails = false;
      } else if (depth === 2 && inDetails && keyIs(b, i + 1, end, 'cached_tokens')) which = 4;
      if (which === 0) {
        i = end; // any other key, or a string value
        continue;
      }
      let j = end + 1;
      while (isWs(b[j]!)) j++;
      if (b[j] !== COLON) {
        i = end; // a string value
        continue;
      }
      j++;
      while (isWs(b[j]!)) j++;
      if (which === 5) {
        // A repeated member is read as JSON.parse reads it, the last one wins: hits named by an
        // earlier prompt_tokens_details are not the answer's when a later one (or a null) replaced it.
        cached = undefined;
        inDetails = b[j] === OPEN_OBJ;
        i = j - 1; // the value is scanned next
        continue;
      }
      let n = 0;
      const start = j;
      for (; b[j]! >= 0x30 && b[j]! <= 0x39; j++) n = n * 10 + (b[j]! - 0x30);
      // 5.0 or 1e3 (a server's float arithmetic): JSON.parse reads a whole number, so does the scan.
      if (j > start && (b[j] === DOT || b[j] === 0x65 || b[j] === 0x45)) {
        j = numberEnd(b, j);
        n = wholeNumber(b, start, j);
      }
      // So for the counts: a repeat that is no count leaves none, not the one before it.
      const count = j > start && n === n && (b[j] === 0x2c || b[j] === CLOSE_OBJ || isWs(b[j]!)) ? n : undefined;
      if (which === 1) prompt = count;
      else if (which === 2) completion = count;
      else if (which === 3) total = count;
      else if (which === 6) written = count;
      else cached = count;
      i = j - 1;
    }
  }
  const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } as Usage;
  if (cached !== undefined) usage.prompt_tokens_details = { cached_tokens: cached };
  if (written !== undefined) usage.cache_creation_input_tokens = written;
  return usage;
}
