/**
 * Pure parsing of what an upstream says about its own rate limits, in the two
 * dialects in the wild plus the standard Retry-After:
 *
 * - OpenAI (and most OpenAI-compatible hosts): `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`,
 *   the reset a Go-style duration until fully replenished: `6m0s`, `1h2m3.5s`, `20ms`, `0.5s`, or bare seconds.
 * - Anthropic: `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`, the reset an RFC 3339
 *   instant. `tokens-*` is the most restrictive token limit in effect; when absent, `input-tokens-*` is used.
 * - `retry-after-ms` (OpenAI, Azure), else `retry-after` in seconds or as an HTTP date.
 *
 * Unparsable values are dropped, never thrown: a quirky header must not break a request.
 */
import { MAX_RETRY_AFTER_MS, parseRetryAfter, RETRY_AFTER_HEADERS } from '../protocol/retry-after.js';
import type { UpstreamHeaders } from '../providers/types.js';

export interface LimitState {
  remaining: number;
  /** Epoch ms when the limit is fully replenished; absent when the upstream did not say. */
  resetAt?: number;
  limit?: number;
}

export interface RateLimitInfo {
  requests?: LimitState;
  tokens?: LimitState;
  retryAfterMs?: number;
}

function first(headers: UpstreamHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function count(v: string | undefined): number | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 1e-3, 'µs': 1e-3, ns: 1e-6 };

/** Go-style duration (`1h2m3.5s`, `20ms`) or bare seconds (`1.5`) → milliseconds. */
export function parseDurationMs(v: string): number | undefined {
  const text = v.trim();
  if (text === '') return undefined;
  const bare = Number(text);
  if (Number.isFinite(bare)) return bare >= 0 ? bare * 1000 : undefined;
  let total = 0;
  let i = 0;
  while (i < text.length) {
    const numStart = i;
    while (i < text.length && ((text[i]! >= '0' && text[i]! <= '9') || text[i] === '.')) i++;
    if (i === numStart) return undefined;
    const n = Number(text.slice(numStart, i));
    const unitStart = i;
    while (i < text.length && !(text[i]! >= '0' && text[i]! <= '9') && text[i] !== '.') i++;
    const unit = UNIT_MS[text.slice(unitStart, i)];
    if (unit === undefined || !Number.isFinite(n)) return undefined;
    total += n * unit;
  }
  return total;
}

/**
 * An OpenAI-style relative reset, or an RFC 3339 / HTTP-date instant → epoch ms. One more
 * than a day ahead is no reset an upstream means (`999999h`, the year 9999) and is dropped
 * like garbage, as Retry-After is: with nothing remaining it paced the deployment out
 * until the process restarted.
 */
function resetAt(v: string | undefined, now: number): number | undefined {
  if (v === undefined || v === '') return undefined;
  const ms = parseDurationMs(v);
  const t = ms !== undefined ? now + ms : Date.parse(v);
  return t - now <= MAX_RETRY_AFTER_MS ? t : undefined;
}

/** [remaining, reset, limit] header names, built once. */
type Names = readonly [string, string, string];
const names = (prefix: string, suffix: string): Names => [
  `${prefix}remaining${suffix}`,
  `${prefix}reset${suffix}`,
  `${prefix}limit${suffix}`,
];
const OPENAI_REQUESTS = names('x-ratelimit-', '-requests');
const OPENAI_TOKENS = names('x-ratelimit-', '-tokens');
const ANTHROPIC_REQUESTS = names('anthropic-ratelimit-requests-', '');
const ANTHROPIC_TOKENS = names('anthropic-ratelimit-tokens-', '');
const ANTHROPIC_INPUT_TOKENS = names('anthropic-ratelimit-input-tokens-', '');

/**
 * Every upstream header this module reads. The HTTP layer keeps only the
 * headers the gateway acts on (providers/http-exchange.ts `headersOf`); a
 * test holds it to this list, so a name added here cannot be dropped there.
 */
export const RATE_LIMIT_HEADERS: readonly string[] = [
  ...OPENAI_REQUESTS,
  ...OPENAI_TOKENS,
  ...ANTHROPIC_REQUESTS,
  ...ANTHROPIC_TOKENS,
  ...ANTHROPIC_INPUT_TOKENS,
  ...RETRY_AFTER_HEADERS,
];

function state(headers: UpstreamHeaders, [rem, reset, lim]: Names, now: number): LimitState | undefined {
  const remaining = count(first(headers, rem));
  if (remaining === undefined) return undefined;
  const out: LimitState = { remaining };
  const at = resetAt(first(headers, reset), now);
  if (at !== undefined) out.resetAt = at;
  const limit = count(first(headers, lim));
  if (limit !== undefined) out.limit = limit;
  return out;
}

/** Retry-After in ms: the one strict parser shared with error classification. */
export const parseRetryAfterMs = (headers: UpstreamHeaders, now: number): number | undefined => parseRetryAfter(headers, now);

/** Header names are expected lower-case, as node and undici deliver them. */
export function parseRateLimitHeaders(headers: UpstreamHeaders, now: number): RateLimitInfo {
  const out: RateLimitInfo = {};
  const requests = state(headers, OPENAI_REQUESTS, now) ?? state(headers, ANTHROPIC_REQUESTS, now);
  if (requests) out.requests = requests;
  const tokens =
    state(headers, OPENAI_TOKENS, now) ??
    state(headers, ANTHROPIC_TOKENS, now) ??
    state(headers, ANTHROPIC_INPUT_TOKENS, now);
  if (tokens) out.tokens = tokens;
  const retry = parseRetryAfterMs(headers, now);
  if (retry !== undefined) out.retryAfterMs = retry;
  return out;
}

/**
 * How long until a limit these headers say is spent (nothing remaining) is replenished: the wait
 * a 429 names by its rate-limit headers when it sends no Retry-After. Undefined when none is spent.
 */
export function exhaustedWaitMs(headers: UpstreamHeaders, now: number): number | undefined {
  const info = parseRateLimitHeaders(headers, now);
  let wait: number | undefined;
  for (const l of [info.requests, info.tokens]) {
    if (l?.resetAt !== undefined && l.remaining < 1 && l.resetAt > now) wait = Math.max(wait ?? 0, l.resetAt - now);
  }
  return wait;
}
