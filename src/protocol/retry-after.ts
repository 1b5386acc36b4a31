/**
 * Retry-After as upstreams send it: `retry-after-ms` (OpenAI, Azure) first,
 * then `retry-after` as seconds or an HTTP date. Strict on purpose: V8's
 * Date.parse accepts near-garbage ("1 2" is a date in 2001) that would read as
 * "retry now", and `Number('')` is 0.
 */
import type { UpstreamHeaders } from '../providers/types.js';

const SECONDS = /^\d+(?:\.\d+)?$/;
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** The headers read here, in the order they are read. */
export const RETRY_AFTER_HEADERS = ['retry-after-ms', 'retry-after'] as const;

function first(headers: UpstreamHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return (Array.isArray(v) ? v[0] : v)?.trim();
}

/** Milliseconds to wait, or undefined when absent or unparsable. */
export function parseRetryAfter(headers: UpstreamHeaders | undefined, now: number): number | undefined {
  const ms = first(headers, RETRY_AFTER_HEADERS[0]);
  if (ms !== undefined && SECONDS.test(ms)) return Number(ms);
  const ra = first(headers, RETRY_AFTER_HEADERS[1]);
  if (ra === undefined || ra === '') return undefined;
  if (SECONDS.test(ra)) return Number(ra) * 1000;
  if (!HTTP_DATE.test(ra)) return undefined;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
