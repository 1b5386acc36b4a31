import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse.js';
import { exactTokensThreshold } from './request-lifecycle.js';

const base = { providers: [{ id: 'p', type: 'simulated' }] };

describe('exactTokensThreshold', () => {
  it('is infinite without any tpm limit: the hot path never runs a tokenizer', () => {
    expect(exactTokensThreshold(parseConfig(base, {}))).toBe(Number.POSITIVE_INFINITY);
  });

  it('is 1 % of the smallest tpm among providers, deployments and keys', () => {
    const config = parseConfig(
      {
        providers: [{ id: 'p', type: 'simulated', tpm: 1_000_000 }],
        models: [{ name: 'm', deployments: [{ provider: 'p', model: 'x', tpm: 40_000 }] }],
        keys: [{ id: 'k', key: '${K}', tpm: 90_000 }],
      },
      { K: 'secret' },
    );
    expect(exactTokensThreshold(config)).toBe(400);
  });
});
