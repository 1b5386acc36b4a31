import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../resilience/classify.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { fixOllamaError } from './errors.js';

const body = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const classify = (status: number, text: string) => fixOllamaError(errorFromResponse(status, text, {}, 0)) as UpstreamError;

describe('Ollama error bodies → normalized categories', () => {
  it('reads {"error": "..."} and treats a missing model (404) as not_found', () => {
    expect(classify(404, body('error-404.json'))).toMatchObject({
      category: 'not_found',
      status: 404,
      message: 'model "llama3.3" not found, try pulling it first',
    });
  });

  it('treats a model without tool support (400) as invalid_request', () => {
    expect(classify(400, body('error-400-tools.json')).category).toBe('invalid_request');
  });

  it('fixes the busy-queue 503 to overloaded', () => {
    expect(classify(503, body('error-503.json'))).toMatchObject({ category: 'overloaded', status: 503 });
  });

  it('leaves other 5xx as server errors', () => {
    expect(classify(500, '{"error":"llama runner process has terminated: exit status 2"}').category).toBe('server');
  });
});
