import { describe, expect, it } from 'vitest';
import { GatewayError } from '../core/errors.js';
import { parseJsonBody } from './body.js';

/** Text of every kind a prompt holds: ASCII, accented Latin-1, other BMP scripts, astral (emoji), controls. */
const ALPHABET = ['a', 'Z', ' ', '"', '\\', '\n', '\u0001', 'é', 'ÿ', '\u0080', 'ß', 'ж', '中', '€', '\u2028', '😀', '𝄞'];

function randomText(seed: number, length: number): string {
  let s = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    out += ALPHABET[s % ALPHABET.length];
  }
  return out;
}

const refusal = (buf: Buffer): string => {
  try {
    parseJsonBody(buf);
  } catch (err) {
    return (err as GatewayError).message;
  }
  return 'accepted';
};

describe('parseJsonBody', () => {
  it('reads every body as strict UTF-8 would, whether it is pure ASCII (taken as it stands) or not', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const value = { model: 'chat', messages: [{ role: 'user', content: randomText(seed, seed % 40) }] };
      const json = JSON.stringify(value);
      // Compared as text: the parsed object also carries its raw bytes, under a symbol (raw-body.ts).
      expect(JSON.stringify(parseJsonBody(Buffer.from(json, 'utf8')))).toBe(json);
      // The same text with every non-ASCII character escaped, as Python's json.dumps sends it: all ASCII.
      const escaped = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      expect(Buffer.from(escaped, 'utf8').every((b) => b < 0x80)).toBe(true);
      expect(JSON.stringify(parseJsonBody(Buffer.from(escaped, 'utf8')))).toBe(json);
    }
  });

  it('refuses bytes that are not UTF-8, however much of the body is ASCII', () => {
    const head = Buffer.from('{"model":"chat","messages":[{"role":"user","content":"');
    const tail = Buffer.from('"}]}');
    for (const bad of [[0xff], [0xc3, 0x28], [0xe9], [0xed, 0xa0, 0x80] /* a lone surrogate */, [0xc0, 0xaf] /* overlong '/' */]) {
      expect(refusal(Buffer.concat([head, Buffer.from(bad), tail]))).toBe('Request body is not valid UTF-8');
    }
    // Latin-1 é (one byte) is not UTF-8 é: refused, never read as 'é'.
    expect(refusal(Buffer.from('{"model":"caf\xe9"}', 'latin1'))).toBe('Request body is not valid UTF-8');
  });

  it('names what is wrong with a body that is not JSON', () => {
    expect(refusal(Buffer.alloc(0))).toBe('Request body is empty: expected JSON');
    expect(refusal(Buffer.from('{"model":'))).toMatch(/^Malformed JSON: /);
  });
});
