import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../resilience/upstream-error.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from './retry-after.js';

const NOW = Date.UTC(2026, 0, 1);

describe('a Retry-After no upstream can mean is read as absent', () => {
  it.each([
    ['seconds past a day (99999999999: 3,000 years)', { 'retry-after': '99999999999' }],
    ['seconds too long to be a number (Infinity)', { 'retry-after': '9'.repeat(400) }],
    ['retry-after-ms too long to be a number', { 'retry-after-ms': '9'.repeat(400) }],
    ['an HTTP date in the year 9999', { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }],
  ])('%s', (_name, headers) => {
    expect(parseRetryAfter(headers, NOW)).toBeUndefined();
  });

  it('a day is still honoured (daily quotas), a day and a second is not', () => {
    expect(parseRetryAfter({ 'retry-after': '86400' }, NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter({ 'retry-after': '86401' }, NOW)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'Fri, 02 Jan 2026 00:00:00 GMT' }, NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('so is one an adapter read from a body (Gemini RetryInfo), whatever its source', () => {
    const e = (retryAfterMs: number) => new UpstreamError({ category: 'rate_limited', message: 'quota', retryAfterMs });
    expect(e(Number.POSITIVE_INFINITY).retryAfterMs).toBeUndefined();
    expect(e(1e20).retryAfterMs).toBeUndefined();
    expect(e(Number.NaN).retryAfterMs).toBeUndefined();
    expect(e(30_000).retryAfterMs).toBe(30_000);
  });
});
