import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../resilience/classify.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { fixCohereError } from './errors.js';

const body = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const classify = (status: number, text: string, headers = {}) => fixCohereError(errorFromResponse(status, text, headers, 0)) as UpstreamError;

describe('Cohere error bodies → normalized categories', () => {
  it('reads the message out of Cohere\'s {id, message} body', () => {
    const err = classify(400, body('error-400.json'));
    expect(err.category).toBe('invalid_request');
    expect(err.message).toBe('invalid request: message must be at least 1 token long or tool results must be specified.');
  });

  it('recognises a too-long prompt as context_length', () => {
    expect(classify(400, body('error-400-too-long.json')).category).toBe('context_length');
  });

  it('classifies the trial-key 429 as rate_limited, with Retry-After', () => {
    const err = classify(429, body('error-429.json'), { 'retry-after': '3' });
    expect(err.category).toBe('rate_limited');
    expect(err.retryAfterMs).toBe(3000);
  });

  it('fixes 498 (invalid token) to auth and 499 (cancelled upstream) to network', () => {
    expect(classify(498, body('error-498.json'))).toMatchObject({ category: 'auth', status: 498, message: 'invalid api token' });
    expect(classify(499, '{"message":"request cancelled"}').category).toBe('network');
  });

  it('leaves server errors and non-upstream errors alone', () => {
    expect(classify(503, '{"message":"service unavailable"}').category).toBe('server');
    const plain = new Error('boom');
    expect(fixCohereError(plain)).toBe(plain);
  });
});
