/**
 * Anthropic answers 429 with the same words whether its minute is full or the request alone
 * is larger than the whole limit: "This request would exceed the rate limit for your
 * organization (…) of 30,000 input tokens per minute". The second is no rate limit. No wait
 * lets that request through on this deployment, yet read as one it cooled the deployment down
 * for its Retry-After, refusing every other client's requests there, and when no other candidate
 * served, the client got a 503 inviting a retry that would fail the same way. OpenAI says it
 * outright ("Request too large … (TPM)", classify.ts); here it is told by size.
 *
 * Such a 429 becomes this deployment's refusal of the request (`invalid_request`, worded as
 * OpenAI's so refusedByThisModel knows it): the next candidate, no cooldown, no breaker, the
 * reserved tokens back, and a 400 when no candidate takes it. Only when the prompt is plainly
 * larger: its text at 4 characters a token (English runs ~3.5 with Claude's tokenizer, other
 * scripts far fewer; only whitespace-heavy text runs longer) above MARGIN times the limit. A
 * request nearer the limit stays a rate limit, as before. Not when the request marks a cache
 * breakpoint: cached input does not count towards the limit, so such a request may fit.
 */
import { header } from '../../resilience/classify.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { AnthropicContentBlock, AnthropicRequest } from './wire.js';

/** Anthropic's own count of the limit, sent with its answers (429s included). */
const LIMIT_HEADER = 'anthropic-ratelimit-input-tokens-limit';
const LIMIT_RE = /\bof ([\d,]{1,15}) input tokens per minute\b/i;
/** How far over the limit the prompt must weigh before the 429 is read as "too large". */
export const MARGIN = 1.5;
const CHARS_PER_TOKEN = 4;

/** `err` as this deployment's refusal of `body` for its size, when it is that; else `err` unchanged. */
export function refusedForSize(err: unknown, body: AnthropicRequest): unknown {
  if (!(err instanceof UpstreamError) || err.category !== 'rate_limited' || err.status !== 429) return err;
  const limit = inputLimitOf(err);
  if (limit === undefined || hasCacheBreakpoint(body)) return err;
  const tokens = Math.ceil(promptChars(body) / CHARS_PER_TOKEN);
  if (tokens <= limit * MARGIN) return err;
  return new UpstreamError({
    category: 'invalid_request',
    status: err.status,
    message:
      `Request too large for ${body.model} on input tokens per minute: the prompt alone is about ${tokens.toLocaleString('en-US')} tokens, ` +
      `and this deployment's whole limit is ${limit.toLocaleString('en-US')} a minute. Reduce the prompt, or use a deployment with a larger limit`,
    providerCode: err.providerCode,
    headers: err.headers,
    param: 'messages',
  });
}

/** The input-tokens-per-minute limit the 429 names: its header, else its message. */
export function inputLimitOf(err: UpstreamError): number | undefined {
  const h = Number(header(err.headers, LIMIT_HEADER));
  if (Number.isSafeInteger(h) && h > 0) return h;
  const m = LIMIT_RE.exec(err.message);
  const n = m ? Number(m[1]!.replace(/,/g, '')) : Number.NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function hasCacheBreakpoint(body: AnthropicRequest): boolean {
  if (Array.isArray(body.system) && body.system.some((b) => b.cache_control !== undefined)) return true;
  if (body.tools?.some((t) => t.cache_control !== undefined)) return true;
  return body.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.cache_control !== undefined || (b.type === 'tool_result' && Array.isArray(b.content) && b.content.some((c) => c.cache_control !== undefined))));
}

/** The prompt's text, counted in characters: system, turns and tool results (images, documents and definitions left out: a lower bound). */
function promptChars(body: AnthropicRequest): number {
  let n = typeof body.system === 'string' ? body.system.length : (body.system ?? []).reduce((s, b) => s + b.text.length, 0);
  for (const m of body.messages) n += typeof m.content === 'string' ? m.content.length : blockChars(m.content);
  return n;
}

function blockChars(blocks: readonly AnthropicContentBlock[]): number {
  let n = 0;
  for (const b of blocks) {
    if (b.type === 'text') n += b.text.length;
    else if (b.type === 'tool_result') n += typeof b.content === 'string' ? b.content.length : blockChars(b.content ?? []);
  }
  return n;
}
