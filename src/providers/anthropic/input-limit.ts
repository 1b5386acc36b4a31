/**
 * Anthropic's side of refused-for-size.ts: the input-tokens-per-minute limit its 429 names, and
 * what of a request counts against it.
 */
import { header } from '../../resilience/classify.js';
import type { AnthropicContentBlock, AnthropicRequest } from './wire.js';
import type { UpstreamHeaders } from '../types.js';
import { countedChars } from '../refused-for-size.js';

/** Anthropic's own count of the limit, sent with its answers (429s included). */
const LIMIT_HEADER = 'anthropic-ratelimit-input-tokens-limit';
const LIMIT_RE = /\bof (\d{1,3}(?:,\d{3}){1,4}|\d{1,15}) input tokens per minute\b/i;
const WHOLE = /^\d{1,15}$/;

/** The input-tokens-per-minute limit a 429 names: its header, else its message. */
export function inputLimitOf(headers: UpstreamHeaders | undefined, message: string): number | undefined {
  // Digits only: Number() also reads '0x10', '1e3' and ' 7 ', and a proxy's odd value would teach a tiny limit.
  const raw = header(headers, LIMIT_HEADER)?.trim();
  const h = raw !== undefined && WHOLE.test(raw) ? Number(raw) : Number.NaN;
  if (h > 0) return h;
  const m = LIMIT_RE.exec(message);
  const n = m ? Number(m[1]!.replace(/,/g, '')) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** A prompt-cache breakpoint anywhere: cached input does not count towards the limit, so the request may fit. */
export function hasCacheBreakpoint(body: AnthropicRequest): boolean {
  if (Array.isArray(body.system) && body.system.some((b) => b.cache_control !== undefined)) return true;
  if (body.tools?.some((t) => t.cache_control !== undefined)) return true;
  return body.messages.some(
    (m) =>
      Array.isArray(m.content) &&
      m.content.some((b) => b.cache_control !== undefined || (b.type === 'tool_result' && Array.isArray(b.content) && b.content.some((c) => c.cache_control !== undefined))),
  );
}

/**
 * The prompt's text, counted in characters (countedChars): system, turns and tool results (images,
 * documents and definitions left out: a lower bound). 0 with a cache breakpoint: cached input does
 * not count towards Anthropic's limit, so such a request is never judged by its size.
 */
export function promptChars(body: AnthropicRequest): number {
  if (hasCacheBreakpoint(body)) return 0;
  let n = typeof body.system === 'string' ? countedChars(body.system) : (body.system ?? []).reduce((s, b) => s + countedChars(b.text), 0);
  for (const m of body.messages) n += typeof m.content === 'string' ? countedChars(m.content) : blockChars(m.content);
  return n;
}

function blockChars(blocks: readonly AnthropicContentBlock[]): number {
  let n = 0;
  for (const b of blocks) {
    if (b.type === 'text') n += countedChars(b.text);
    else if (b.type === 'tool_result') n += typeof b.content === 'string' ? countedChars(b.content) : blockChars(b.content ?? []);
  }
  return n;
}
