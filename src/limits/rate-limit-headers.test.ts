import { describe, expect, it } from 'vitest';
import type { UpstreamHeaders } from '../providers/types.js';
import { exhaustedWaitMs, parseDurationMs, parseRateLimitHeaders, parseRetryAfterMs, type RateLimitInfo } from './rate-limit-headers.js';

const NOW = Date.parse('2025-08-21T12:40:58Z');

describe('parseDurationMs', () => {
  it.each([
    ['6m0s', 360_000],
    ['1h2m3.5s', 3_723_500],
    ['20ms', 20],
    ['12ms', 12],
    ['0.5s', 500],
    ['1s', 1000],
    ['2m59.56s', 179_560],
    ['1m30.123ms', 60_030.123],
    ['100us', 0.1],
    ['1', 1000],
    ['1.5', 1500],
    [' 7 ', 7000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDurationMs(text)).toBeCloseTo(ms, 6);
  });

  it.each(['', 'abc', '-1s', '5x', '1.2.3s', 's', '2025-08-21T12:40:59Z'])('rejects %j', (text) => {
    expect(parseDurationMs(text)).toBeUndefined();
  });
});

describe('parseRateLimitHeaders', () => {
  const table: [string, UpstreamHeaders, RateLimitInfo][] = [
    [
      // The sample values of OpenAI's rate-limit guide ("Rate limits in headers").
      'OpenAI guide sample',
      {
        'x-ratelimit-limit-requests': '60',
        'x-ratelimit-limit-tokens': '150000',
        'x-ratelimit-remaining-requests': '59',
        'x-ratelimit-remaining-tokens': '149984',
        'x-ratelimit-reset-requests': '1s',
        'x-ratelimit-reset-tokens': '6m0s',
      },
      {
        requests: { remaining: 59, resetAt: NOW + 1000, limit: 60 },
        tokens: { remaining: 149_984, resetAt: NOW + 360_000, limit: 150_000 },
      },
    ],
    [
      // A high-tier chat completion response (millisecond resets).
      'OpenAI millisecond resets',
      {
        'x-ratelimit-limit-requests': '5000',
        'x-ratelimit-limit-tokens': '160000',
        'x-ratelimit-remaining-requests': '4999',
        'x-ratelimit-remaining-tokens': '159976',
        'x-ratelimit-reset-requests': '12ms',
        'x-ratelimit-reset-tokens': '9ms',
      },
      {
        requests: { remaining: 4999, resetAt: NOW + 12, limit: 5000 },
        tokens: { remaining: 159_976, resetAt: NOW + 9, limit: 160_000 },
      },
    ],
    [
      // A recorded Anthropic Messages response (RFC 3339 resets, combined and input/output token families).
      'Anthropic recorded response',
      {
        'anthropic-ratelimit-input-tokens-limit': '80000',
        'anthropic-ratelimit-input-tokens-remaining': '80000',
        'anthropic-ratelimit-input-tokens-reset': '2025-08-21T12:40:59Z',
        'anthropic-ratelimit-output-tokens-limit': '16000',
        'anthropic-ratelimit-output-tokens-remaining': '16000',
        'anthropic-ratelimit-output-tokens-reset': '2025-08-21T12:41:00Z',
        'anthropic-ratelimit-requests-limit': '1000',
        'anthropic-ratelimit-requests-remaining': '999',
        'anthropic-ratelimit-requests-reset': '2025-08-21T12:40:59Z',
        'anthropic-ratelimit-tokens-limit': '96000',
        'anthropic-ratelimit-tokens-remaining': '96000',
        'anthropic-ratelimit-tokens-reset': '2025-08-21T12:40:59Z',
      },
      {
        requests: { remaining: 999, resetAt: NOW + 1000, limit: 1000 },
        tokens: { remaining: 96_000, resetAt: NOW + 1000, limit: 96_000 },
      },
    ],
    [
      'Anthropic 429 with retry-after, input tokens only',
      {
        'retry-after': '20',
        'anthropic-ratelimit-requests-remaining': '0',
        'anthropic-ratelimit-requests-reset': '2025-08-21T12:41:18.250Z',
        'anthropic-ratelimit-input-tokens-remaining': '0',
        'anthropic-ratelimit-input-tokens-reset': '2025-08-21T12:41:18Z',
      },
      {
        requests: { remaining: 0, resetAt: NOW + 20_250 },
        tokens: { remaining: 0, resetAt: NOW + 20_000 },
        retryAfterMs: 20_000,
      },
    ],
    [
      'retry-after-ms wins over retry-after',
      { 'retry-after-ms': '150', 'retry-after': '1' },
      { retryAfterMs: 150 },
    ],
    [
      'retry-after as an HTTP date',
      { 'retry-after': 'Thu, 21 Aug 2025 12:41:08 GMT' },
      { retryAfterMs: 10_000 },
    ],
    [
      'retry-after HTTP date in the past is zero',
      { 'retry-after': 'Thu, 21 Aug 2025 12:00:00 GMT' },
      { retryAfterMs: 0 },
    ],
    [
      'remaining without a reset keeps no resetAt',
      { 'x-ratelimit-remaining-requests': '3' },
      { requests: { remaining: 3 } },
    ],
    [
      'array values: the first counts',
      { 'x-ratelimit-remaining-requests': ['2', '9'], 'x-ratelimit-reset-requests': ['0.5s'] },
      { requests: { remaining: 2, resetAt: NOW + 500 } },
    ],
    [
      'garbage is dropped, not thrown',
      {
        'x-ratelimit-remaining-requests': 'lots',
        'x-ratelimit-remaining-tokens': '10',
        'x-ratelimit-reset-tokens': 'soon',
        'retry-after': 'later',
        'retry-after-ms': '-5',
      },
      { tokens: { remaining: 10 } },
    ],
    ['no rate-limit headers at all', { 'content-type': 'application/json' }, {}],
    [
      'a reset more than a day ahead is dropped (no upstream means it), one within a day kept',
      {
        'x-ratelimit-remaining-requests': '0',
        'x-ratelimit-reset-requests': '999999h',
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': '24h',
        'anthropic-ratelimit-requests-remaining': '0',
        'anthropic-ratelimit-requests-reset': '9999-12-31T23:59:59Z',
        'retry-after': '99999999999',
      },
      { requests: { remaining: 0 }, tokens: { remaining: 0, resetAt: NOW + 86_400_000 } },
    ],
  ];

  it.each(table)('%s', (_name, headers, expected) => {
    expect(parseRateLimitHeaders(headers, NOW)).toEqual(expected);
  });
});

describe('parseRetryAfterMs', () => {
  it('reads fractional seconds and ignores blanks', () => {
    expect(parseRetryAfterMs({ 'retry-after': '1.5' }, NOW)).toBe(1500);
    expect(parseRetryAfterMs({ 'retry-after': ' ' }, NOW)).toBeUndefined();
    expect(parseRetryAfterMs({}, NOW)).toBeUndefined();
  });
});

describe('exhaustedWaitMs', () => {
  const now = Date.UTC(2026, 0, 1);
  it('is the reset of a spent limit, the later of two; nothing while some remains', () => {
    expect(exhaustedWaitMs({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1s' }, now)).toBe(1000);
    expect(
      exhaustedWaitMs(
        { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '6s' },
        now,
      ),
    ).toBe(6000);
    expect(exhaustedWaitMs({ 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': new Date(now + 2500).toISOString() }, now)).toBe(2500);
    expect(exhaustedWaitMs({ 'x-ratelimit-remaining-requests': '3', 'x-ratelimit-reset-requests': '1s' }, now)).toBeUndefined();
    expect(exhaustedWaitMs({}, now)).toBeUndefined();
  });
});
