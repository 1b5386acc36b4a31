/**
 * Query-string parsing for `GET /traces`. Pure: the server answers 400 with
 * the returned `error` (it names the parameter and never echoes long input).
 */
import { MAX_TRACE_LIMIT, type TraceFilter } from './trace-store.js';

// Strict ISO 8601 date or date-time (Date.parse alone accepts many other shapes).
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
const DIGITS = /^\d{1,16}$/;
const MAX_TEXT_PARAM = 256;

/** A refused filter: the message, and the parameter it names (the error's `param`). */
export interface FilterError {
  error: string;
  param: string;
}

export function parseTraceFilter(params: URLSearchParams): TraceFilter | FilterError {
  const f: TraceFilter = {};

  const fallback = value(params, 'fallbackUsed');
  if (fallback !== undefined) {
    const v = fallback.toLowerCase();
    if (v !== 'true' && v !== 'false') return { error: 'fallbackUsed must be true or false', param: 'fallbackUsed' };
    f.fallbackUsed = v === 'true';
  }

  for (const name of ['routedProvider', 'model', 'keyId'] as const) {
    const v = value(params, name);
    if (v === undefined) continue;
    if (v.length > MAX_TEXT_PARAM) return { error: `${name} is longer than ${MAX_TEXT_PARAM} characters`, param: name };
    f[name] = v;
  }

  const status = value(params, 'status');
  if (status !== undefined) {
    const n = DIGITS.test(status) ? Number(status) : NaN;
    if (!(n >= 100 && n <= 599)) return { error: 'status must be an HTTP status code (100-599)', param: 'status' };
    f.status = n;
  }

  const since = value(params, 'since');
  if (since !== undefined) {
    const iso = plusFromQuery(since);
    const ms = DIGITS.test(since) ? Number(since) : ISO_8601.test(iso) ? Date.parse(iso) : NaN;
    if (!Number.isFinite(ms)) return { error: 'since must be an ISO 8601 date-time or epoch milliseconds', param: 'since' };
    f.since = ms;
  }

  const limit = value(params, 'limit');
  if (limit !== undefined) {
    const n = DIGITS.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1)) return { error: `limit must be a whole number of at least 1 (larger than ${MAX_TRACE_LIMIT} gives ${MAX_TRACE_LIMIT})`, param: 'limit' };
    // Larger limits are clamped rather than refused: asking for "everything" is reasonable.
    f.limit = Math.min(n, MAX_TRACE_LIMIT);
  }

  return f;
}

export function isFilterError(r: TraceFilter | FilterError): r is FilterError {
  return 'error' in r;
}

/**
 * An unencoded `+` in a query string arrives as a space, so
 * `since=2026-01-01T10:00:00+02:00` typed into curl reads `...00 02:00`:
 * put the `+` back when a time is followed by a space and an offset.
 */
function plusFromQuery(s: string): string {
  const m = /^(.*\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?) (\d{2}:?\d{2})$/.exec(s);
  return m ? `${m[1]}+${m[2]}` : s;
}

/** An empty parameter (`?model=`) counts as absent. */
function value(params: URLSearchParams, name: string): string | undefined {
  const v = params.get(name);
  return v === null || v === '' ? undefined : v;
}
