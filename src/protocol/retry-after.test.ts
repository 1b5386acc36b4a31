import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../resilience/upstream-error.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, retryHintMs, withoutRetryAfter } from './retry-after.js';

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

describe('a wait named only in the error message', () => {
  it.each([
    ['Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2.002s.', 2002],
    ['Please try again in 1m23.456s. Visit https://platform.openai.com/account/rate-limits', 83_456],
    ['Please try again in 6ms.', 6],
    ['Please try again in 1h2m3s', 3_723_000],
    ['Requests to the ChatCompletions_Create Operation have exceeded the rate limit. Please retry after 20 seconds.', 20_000],
    ['Try again in 1 minute', 60_000],
    ['retry in 500 milliseconds', 500],
  ])('%s', (message, ms) => {
    expect(retryHintMs(message)).toBe(ms);
  });

  it('is absent when the message names no wait, or one no upstream means', () => {
    expect(retryHintMs('Rate limit reached. Please try again later.')).toBeUndefined();
    expect(retryHintMs('You exceeded your current quota')).toBeUndefined();
    expect(retryHintMs('try again in 2s3')).toBeUndefined();
    expect(retryHintMs('Please try again in 999999h')).toBeUndefined();
  });
});

describe('withoutRetryAfter', () => {
  it('drops both Retry-After headers and keeps the rest; the same object when there is none', () => {
    expect(withoutRetryAfter({ 'retry-after': '30', 'retry-after-ms': '30000', 'anthropic-ratelimit-input-tokens-remaining': '0' })).toEqual({ 'anthropic-ratelimit-input-tokens-remaining': '0' });
    const plain = { 'x-ratelimit-remaining-requests': '9' };
    expect(withoutRetryAfter(plain)).toBe(plain);
    expect(withoutRetryAfter(undefined)).toBeUndefined();
  });
});
