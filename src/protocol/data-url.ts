/**
 * `data:` URLs as clients put images and files in OpenAI requests, read for
 * providers that take the bytes as base64 (Anthropic, Gemini, Ollama). Per
 * the WHATWG fetch standard the `;base64` flag is case-insensitive and a body
 * without it is percent-encoded bytes; an invalid `%` sequence stays as it is.
 * Never throws: a URL that is not a data URL, or whose base64 is not base64,
 * gives undefined, and each adapter words its own refusal.
 */

export interface DataUrl {
  /** The media type as given (`image/png`); empty when the URL names none. */
  mediaType: string;
  /** The bytes, base64-encoded. */
  base64: string;
}

export function parseDataUrl(url: string): DataUrl | undefined {
  if (!/^data:/i.test(url)) return undefined;
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const params = url.slice(5, comma).split(';');
  const mediaType = params[0]!.trim();
  const payload = url.slice(comma + 1);
  const isBase64 = params.length > 1 && params[params.length - 1]!.trim().toLowerCase() === 'base64';
  if (!isBase64) return { mediaType, base64: percentDecode(payload).toString('base64') };
  // The body is percent-decoded first (`%3D` is '='), then read as base64, whitespace ignored.
  const base64 = (payload.includes('%') ? percentDecode(payload).toString('latin1') : payload).replace(/\s+/g, '');
  return isStandardBase64(base64) ? { mediaType, base64 } : undefined;
}

/** The standard base64 alphabet, by character code (below 128). */
const ALPHABET = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') ALPHABET[ch.charCodeAt(0)] = 1;

/**
 * Standard base64, padding optional (the standard's forgiving decode takes it without): the
 * alphabet, then `==` after a last group of two or `=` after one of three. One pass, no regex:
 * `^(?:[A-Za-z0-9+/]{4})*…$` kept a backtrack entry a group, and an image past about 4.5
 * million characters (3.3 MB, under a raised maxBodyBytes) overflowed the stack, a 500.
 */
function isStandardBase64(s: string): boolean {
  let n = s.length;
  let pad = 0;
  while (pad < 2 && n > 0 && s.charCodeAt(n - 1) === 0x3d /* = */) {
    n--;
    pad++;
  }
  for (let i = 0; i < n; i++) if (ALPHABET[s.charCodeAt(i)] !== 1) return false;
  const rest = n % 4;
  return pad === 0 ? rest !== 1 : rest === 4 - pad;
}

const hex = (c: number): number => (c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1);

/** The bytes a percent-encoded string stands for (characters as UTF-8, `%XX` as the byte). */
function percentDecode(s: string): Buffer {
  const raw = Buffer.from(s, 'utf8');
  const out = Buffer.allocUnsafe(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === 0x25 && i + 2 < raw.length) {
      const hi = hex(raw[i + 1]!);
      const lo = hex(raw[i + 2]!);
      if (hi !== -1 && lo !== -1) {
        out[n++] = hi * 16 + lo;
        i += 2;
        continue;
      }
    }
    out[n++] = c;
  }
  return out.subarray(0, n);
}
