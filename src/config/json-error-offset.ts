/**
 * Where a JSON text stops being JSON, for the errors V8 gives no position for
 * ("Unexpected token ']'" after a trailing comma, a misspelt literal, "Unexpected
 * end of JSON input"). The position is all a config error may say about the source:
 * V8's own excerpt of it can hold a secret (load.ts drops it).
 *
 * A scan of RFC 8259's grammar with an explicit stack rather than recursion, so a
 * file nested some hundred thousand deep cannot overflow it. It stops at the first
 * character that cannot continue valid JSON, where JSON.parse stops too.
 */

type Expect = 'value' | 'value-or-]' | 'key' | 'key-or-}' | 'colon' | 'after-value';

/** Thrown by the token scanners below: the offset where the token went wrong. */
class Stop {
  constructor(readonly at: number) {}
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const ESCAPES = new Set([...'"\\/bfnrt']);
const HEX = /^[0-9a-fA-F]$/;
const LITERALS = ['true', 'false', 'null'];

/** The UTF-16 offset of the first character that cannot continue JSON (text.length: it ended too soon); undefined when `text` is JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  try {
    scan(text);
    return undefined;
  } catch (err) {
    if (err instanceof Stop) return err.at;
    throw err;
  }
}

function scan(text: string): void {
  const open: string[] = []; // the brackets still open
  let expect: Expect = 'value';
  let i = 0;
  for (;;) {
    while (WHITESPACE.has(text[i]!)) i++;
    if (i >= text.length) {
      if (expect === 'after-value' && open.length === 0) return;
      throw new Stop(i);
    }
    const c = text[i]!;
    if (expect === 'after-value') {
      const top = open.at(-1);
      if (top === undefined) throw new Stop(i); // something after the one value
      if (c === ',') expect = top === '[' ? 'value' : 'key';
      else if (c === (top === '[' ? ']' : '}')) open.pop();
      else throw new Stop(i);
      i++;
    } else if (expect === 'colon') {
      if (c !== ':') throw new Stop(i);
      expect = 'value';
      i++;
    } else if ((expect === 'value-or-]' && c === ']') || (expect === 'key-or-}' && c === '}')) {
      open.pop();
      expect = 'after-value';
      i++;
    } else if (expect === 'key' || expect === 'key-or-}') {
      if (c !== '"') throw new Stop(i);
      i = stringEnd(text, i);
      expect = 'colon';
    } else if (c === '[' || c === '{') {
      open.push(c);
      expect = c === '[' ? 'value-or-]' : 'key-or-}';
      i++;
    } else {
      i = c === '"' ? stringEnd(text, i) : c === '-' || (c >= '0' && c <= '9') ? numberEnd(text, i) : literalEnd(text, i);
      expect = 'after-value';
    }
  }
}

/** Past the closing quote of the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let j = start + 1;
  for (; j < text.length; j++) {
    const c = text[j]!;
    if (c === '"') return j + 1;
    if (c < ' ') throw new Stop(j);
    if (c !== '\\') continue;
    j++;
    if (text[j] === 'u') {
      for (let k = 0; k < 4; k++) if (!HEX.test(text[++j] ?? '')) throw new Stop(Math.min(j, text.length));
    } else if (!ESCAPES.has(text[j] ?? '')) throw new Stop(Math.min(j, text.length));
  }
  throw new Stop(j);
}

/** Past a number: `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`. */
function numberEnd(text: string, start: number): number {
  let j = start;
  const digits = (): void => {
    const from = j;
    while (text[j]! >= '0' && text[j]! <= '9') j++;
    if (j === from) throw new Stop(j);
  };
  if (text[j] === '-') j++;
  if (text[j] === '0') j++;
  else digits();
  if (text[j] === '.') {
    j++;
    digits();
  }
  if (text[j] === 'e' || text[j] === 'E') {
    j++;
    if (text[j] === '+' || text[j] === '-') j++;
    digits();
  }
  return j;
}

/** Past `true`, `false` or `null`. */
function literalEnd(text: string, start: number): number {
  const word = LITERALS.find((w) => w[0] === text[start]);
  if (word === undefined) throw new Stop(start);
  for (let k = 1; k < word.length; k++) if (text[start + k] !== word[k]) throw new Stop(Math.min(start + k, text.length));
  return start + word.length;
}
