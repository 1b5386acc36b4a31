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

describe('configWarnings: routing that would quietly not do what the config says', () => {
  it('names an observation-driven strategy that is not built yet, and what orders the pool instead', () => {
    const config = parseConfig(
      {
        providers: [{ id: 'sim', type: 'simulated' }],
        models: [
          { name: 'fast', strategy: 'latency', deployments: [{ provider: 'sim', model: 'a' }] },
          { name: 'cheap', strategy: 'cost', deployments: [{ provider: 'sim', model: 'b' }] },
          { name: 'spread', deployments: [{ provider: 'sim', model: 'c' }] },
          { name: 'busy', strategy: 'least-busy', deployments: [{ provider: 'sim', model: 'd' }] },
        ],
      },
      {},
    );
    expect(configWarnings(config)).toEqual([
      `models[0].strategy: latency is not built yet: 'fast' is ordered by weight (x-switchyard-selection says "weighted (latency pending)")`,
      `models[3].strategy: least-busy is not built yet: 'busy' is ordered by weight (x-switchyard-selection says "weighted (least-busy pending)")`,
    ]);
  });

  it('names each deployment a priceCeiling leaves out of its alias (never chosen there), not those at or under it nor unpriced ones', () => {
    const config = parseConfig(
      {
        providers: [{ id: 'sim', type: 'simulated' }],
        models: [
          {
            name: 'fast',
            priceCeiling: { input: 1, output: 4 },
            deployments: [
              { provider: 'sim', model: 'ok', price: { input: 1, output: 4 } },
              { provider: 'sim', model: 'out', price: { input: 0.5, output: 6 } },
              { provider: 'sim', model: 'unpriced' },
            ],
          },
        ],
      },
      {},
    );
    expect(configWarnings(config)).toEqual([
      "models[0].deployments[1]: priced above the alias's priceCeiling: 'fast' never uses sim/out",
    ]);
  });
});

describe('configWarnings: auto tiers out of price order', () => {
  it("names a tier listed after a pricier one, by its pool's cheapest deployment within its ceiling; unpriced tiers and ties say nothing", () => {
    const tier = (name: string, ...prices: ({ input: number; output: number } | undefined)[]) => ({
      name,
      deployments: prices.map((price, j) => ({ provider: 'sim', model: `${name}-${j}`, ...(price && { price }) })),
    });
    const config = parseConfig(
      {
        providers: [{ id: 'sim', type: 'simulated' }],
        models: [
          tier('mini', { input: 0.15, output: 0.6 }),
          tier('unpriced', undefined),
          // From 0.75 (the 10.0 one does not lower or raise it), as mini: a tie is in order.
          tier('twin', { input: 0.15, output: 0.6 }, { input: 2, output: 8 }),
          tier('frontier', { input: 3, output: 15 }),
          tier('smart', { input: 2.5, output: 10 }),
          // Its 0.1 deployment is above its ceiling's output: never chosen, so not what it costs.
          { ...tier('capped', { input: 0.1, output: 20 }, { input: 5, output: 5 }), priceCeiling: { input: 10, output: 10 } },
        ],
        auto: { tiers: ['mini', 'unpriced', 'twin', 'frontier', 'smart', 'capped'] },
      },
      {},
    );
    expect(configWarnings(config).filter((w) => w.startsWith('auto.'))).toEqual([
      "auto.tiers[4]: 'smart' (from 12.5 USD per 1M tokens, input + output) is listed after the pricier 'frontier' (from 18): auto tries tiers in the order listed, so list them cheapest first",
      "auto.tiers[5]: 'capped' (from 10 USD per 1M tokens, input + output) is listed after the pricier 'frontier' (from 18): auto tries tiers in the order listed, so list them cheapest first",
    ]);
  });
});

describe('configWarnings: CORS open to every page', () => {
  it('warns for origins "*" without client keys, not with keys nor for listed origins', () => {
    const doc = (origins: string[], keys: unknown[] = []) =>
      parseConfig({ server: { cors: { origins } }, keys, providers: [{ id: 's', type: 'simulated' }], models: deployments(['s']) }, { K: 'sk-0123456789abcdef' });
    expect(configWarnings(doc(['*']))).toEqual([
      'server.cors.origins: "*" with no keys: any web page open in a browser that can reach the gateway may call it and spend provider credits (list the pages\' origins, or add keys)',
    ]);
    expect(configWarnings(doc(['*'], [{ id: 'k', key: '${K}' }]))).toEqual([]);
    expect(configWarnings(doc(['https://app.example.com']))).toEqual([]);
  });
});

describe('configWarnings: one deployment given different limits in several aliases', () => {
  it('names each alias that asks for more than the lowest rpm or tpm (or none), which paces it everywhere', () => {
    const config = parseConfig(
      {
        providers: [{ id: 'sim', type: 'simulated' }],
        models: [
          { name: 'fast', deployments: [{ provider: 'sim', model: 'm', rpm: 100, tpm: 5000 }] },
          { name: 'slow', deployments: [{ provider: 'sim', model: 'm', rpm: 10 }] },
          { name: 'same', deployments: [{ provider: 'sim', model: 'm', rpm: 10, tpm: 5000 }] },
        ],
      },
      {},
    );
    expect(configWarnings(config)).toEqual([
      "models[0].deployments[0].rpm: 100 in 'fast', but sim/m is given rpm 10 elsewhere: one upstream, paced by the lowest (10) in every alias",
      "models[1].deployments[0].tpm: unset in 'slow', but sim/m is given tpm 5000 elsewhere: one upstream, paced by the lowest (5000) in every alias",
    ]);
  });
});
