import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse.js';
import { apiKeyHeader } from './api-key-header.js';

describe('apiKeyHeader', () => {
  it('sends each type its own way: a Bearer token in authorization, the bare key elsewhere, nothing without a key', () => {
    const types = ['openai', 'azure', 'anthropic', 'gemini', 'cohere', 'ollama'] as const;
    const config = parseConfig(
      {
        providers: [
          ...types.map((type) => ({ id: type, type, apiKey: '${K}', ...(type === 'azure' ? { baseUrl: 'https://r.openai.azure.com' } : {}) })),
          { id: 'nokey', type: 'openai' },
          { id: 'sim', type: 'simulated' },
        ],
        models: [{ name: 'm', deployments: [{ provider: 'sim', model: 'x' }] }],
      },
      { K: 'k-1' },
    );
    expect(config.providers.map((p) => [p.id, apiKeyHeader(p)])).toEqual([
      ['openai', { authorization: 'Bearer k-1' }],
      ['azure', { 'api-key': 'k-1' }],
      ['anthropic', { 'x-api-key': 'k-1' }],
      ['gemini', { 'x-goog-api-key': 'k-1' }],
      ['cohere', { authorization: 'Bearer k-1' }],
      ['ollama', { authorization: 'Bearer k-1' }],
      ['nokey', {}],
      ['sim', {}],
    ]);
  });
});
