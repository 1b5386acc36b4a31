/**
 * Retry-After as upstreams send it: `retry-after-ms` (OpenAI, Azure) first,
 * then `retry-after` as seconds or an HTTP date. Strict on purpose: V8's
 * Date.parse accepts near-garbage ("1 2" is a date in 2001) that would read as
 * "retry now", and `Number('')` is 0.
 */
import type { UpstreamHeaders } from '../providers/types.js';

const SECONDS = /^\d+(?:\.\d+)?$/;
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/**
 * The longest wait an upstream may ask for: a day (daily quotas reset within one). A
 * longer one, or one too long to be a number (400 nines read as Infinity), is no answer
 * an upstream means, and is read as absent: taken as given it cooled the deployment down
 * until the process restarted, while the 503 for an infinite one said to retry in 1 s.
 */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/** `ms` when it is a wait an upstream can mean (0 to a day), else undefined, as for an unparsable header. */
export function plausibleRetryAfterMs(ms: number | undefined): number | undefined {
  return ms !== undefined && ms >= 0 && ms <= MAX_RETRY_AFTER_MS ? ms : undefined;
}

/** The headers read here, in the order they are read. */
export const RETRY_AFTER_HEADERS = ['retry-after-ms', 'retry-after'] as const;

/**
 * `headers` without a Retry-After: for an answer that refused the request for what it is (too large
 * for the deployment's whole minute, invalid), whose wait says nothing about the deployment's
 * capacity for other requests. Its remaining and reset headers still do. The same object when it has none.
 */
export function withoutRetryAfter(headers: UpstreamHeaders | undefined): UpstreamHeaders | undefined {
  if (headers === undefined || (headers[RETRY_AFTER_HEADERS[0]] === undefined && headers[RETRY_AFTER_HEADERS[1]] === undefined)) return headers;
  const rest = { ...headers };
  for (const name of RETRY_AFTER_HEADERS) delete rest[name];
  return rest;
}

function first(headers: UpstreamHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return (Array.isArray(v) ? v[0] : v)?.trim();
}

/** Milliseconds to wait, or undefined when absent, unparsable or implausible (over MAX_RETRY_AFTER_MS). */
export function parseRetryAfter(headers: UpstreamHeaders | undefined, now: number): number | undefined {
  const ms = first(headers, RETRY_AFTER_HEADERS[0]);
  if (ms !== undefined && SECONDS.test(ms)) return plausibleRetryAfterMs(Number(ms));
  const ra = first(headers, RETRY_AFTER_HEADERS[1]);
  if (ra === undefined || ra === '') return undefined;
  if (SECONDS.test(ra)) return plausibleRetryAfterMs(Number(ra) * 1000);
  if (!HTTP_DATE.test(ra)) return undefined;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : plausibleRetryAfterMs(Math.max(0, date - now));
}

/** OpenAI's and Groq's "Please try again in 1m23.456s" (a Go duration), Azure's "retry after 20 seconds". */
const HINT_RE = /\b(?:try again|retry) (?:in|after) ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+|\d+(?:\.\d+)? ?(?:milliseconds?|seconds?|secs?|minutes?|mins?))\b/i;
const PART_RE = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The wait an error's message asks for, when no header said it: some upstreams put it only
 * in the text (OpenAI's 429 for a tokens-per-minute limit, Azure's, a LiteLLM proxy relaying
 * either). Undefined when the message names none or an implausible one.
 */
export function retryHintMs(message: string): number | undefined {
  const m = HINT_RE.exec(message);
  if (m === null) return undefined;
  const d = m[1]!.toLowerCase();
  // A unit in words ("20 seconds", "1 minute"); one of two letters at most is a Go duration's ("500ms", "2s").
  const worded = /^(\d+(?:\.\d+)?) ?([a-z]+)$/.exec(d);
  if (worded !== null && worded[2]!.length > 2) {
    const unit = worded[2]!.startsWith('milli') ? 1 : worded[2]!.startsWith('min') ? 60_000 : 1000;
    return plausibleRetryAfterMs(Math.ceil(Number(worded[1]) * unit));
  }
  let ms = 0;
  for (const p of d.matchAll(PART_RE)) ms += Number(p[1]) * UNIT_MS[p[2]!]!;
  return plausibleRetryAfterMs(Math.ceil(ms));
}
