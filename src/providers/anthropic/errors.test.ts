import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { anthropicErrorFromResponse, anthropicStreamError } from './errors.js';

interface ErrorCase {
  name: string;
  status: number;
  headers: Record<string, string>;
  body: unknown;
  category: string;
  providerCode: string;
  retryAfterMs?: number;
}

const { cases } = JSON.parse(readFileSync(new URL('./fixtures/errors.json', import.meta.url), 'utf8')) as {
  cases: ErrorCase[];
};

describe('anthropicErrorFromResponse against the error fixtures', () => {
  for (const c of cases) {
    it(c.name, () => {
      const err = anthropicErrorFromResponse(c.status, JSON.stringify(c.body), c.headers, 0);
      expect(err.category).toBe(c.category);
      expect(err.status).toBe(c.status);
      expect(err.providerCode).toBe(c.providerCode);
      expect(err.message).toBe((c.body as { error: { message: string } }).error.message);
      expect(err.retryAfterMs).toBe(c.retryAfterMs);
      expect(err.headers).toBe(c.headers);
    });
  }

  it('a body that is not JSON still gets a category from its status', () => {
    const err = anthropicErrorFromResponse(529, '<html>overloaded</html>', {}, 0);
    expect(err.category).toBe('overloaded');
  });
});

describe('anthropicStreamError', () => {
  it.each([
    ['overloaded_error', 'Overloaded', 'overloaded'],
    ['rate_limit_error', 'Rate limited', 'rate_limited'],
    ['api_error', 'Internal server error', 'server'],
    ['invalid_request_error', 'prompt is too long: 300000 tokens > 200000 maximum', 'context_length'],
    ['authentication_error', 'invalid x-api-key', 'auth'],
    ['billing_error', 'Payment required', 'auth'],
    ['request_too_large', 'Request exceeds the maximum allowed number of bytes.', 'invalid_request'],
    ['brand_new_error', 'Something', 'server'],
  ])('%s → %s', (type, message, category) => {
    const err = anthropicStreamError(JSON.stringify({ type: 'error', error: { type, message } }));
    expect(err.category).toBe(category);
    expect(err.providerCode).toBe(type);
    expect(err.message).toBe(message);
    // The stream itself was a 200: no status is invented.
    expect(err.status).toBeUndefined();
  });
});
