import { describe, expect, it } from 'vitest';
import { parseConfig } from './parse.js';
import { configWarnings } from './warnings.js';

const deployments = (ids: string[]) => [{ name: 'm', deployments: ids.map((provider) => ({ provider, model: 'x' })) }];

describe('configWarnings: a hosted provider without a key', () => {
  it('warns for the public API without apiKey, not for a proxy of one\'s own, nor for a key given as the header itself', () => {
    const config = parseConfig(
      {
        providers: [
          { id: 'bare', type: 'gemini' },
          { id: 'proxy', type: 'gemini', baseUrl: 'http://127.0.0.1:9000' },
          { id: 'header', type: 'anthropic', headers: { 'X-Api-Key': '${ANTHROPIC_KEY}' } },
          { id: 'keyed', type: 'openai', apiKey: '${OPENAI_KEY}' },
        ],
        models: deployments(['bare', 'proxy', 'header', 'keyed']),
      },
      { ANTHROPIC_KEY: 'a', OPENAI_KEY: 'o' },
    );
    expect(configWarnings(config)).toEqual([
      "providers[0].apiKey: none for the public gemini API: every request to 'bare' will be refused (401) and fail over",
    ]);
  });
});
