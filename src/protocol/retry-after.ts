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
