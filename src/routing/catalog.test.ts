import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse.js';
import { Catalog, type Segment } from './catalog.js';

const ENV = { OA_KEY: 'sk-oa', AN_KEY: 'sk-an', GM_KEY: 'gm-key' };

/**
 * fast → [smart, local]; smart → [frontier, local]; frontier → [local].
 * gpt-4o-mini sits in both fast and smart; claude-sonnet in smart and frontier.
 */
function doc() {
  return {
    providers: [
      { id: 'oa', type: 'openai', apiKey: '${OA_KEY}' },
      { id: 'an', type: 'anthropic', apiKey: '${AN_KEY}' },
      { id: 'gm', type: 'gemini', apiKey: '${GM_KEY}' },
      { id: 'ol', type: 'ollama' },
    ],
    models: [
      {
        name: 'fast',
        deployments: [
          { provider: 'oa', model: 'gpt-4o-mini', weight: 3, price: { input: 0.15, output: 0.6 } },
          { provider: 'gm', model: 'gemini-2.5-flash' },
        ],
        fallbacks: ['smart', 'local'],
      },
      {
        name: 'smart',
        deployments: [
          { provider: 'an', model: 'claude-sonnet-4' },
          { provider: 'oa', model: 'gpt-4o-mini', weight: 3, price: { input: 0.15, output: 0.6 } },
        ],
        fallbacks: ['frontier', 'local'],
      },
      {
        name: 'frontier',
        deployments: [
          { provider: 'an', model: 'claude-opus-4' },
          { provider: 'an', model: 'claude-sonnet-4' },
        ],
        fallbacks: ['local'],
      },
      { name: 'local', deployments: [{ provider: 'ol', model: 'llama3.1' }] },
      {
        name: 'cheap',
        strategy: 'cost',
        priceCeiling: { input: 1, output: 4 },
        deployments: [
          { provider: 'oa', model: 'gpt-4o', price: { input: 2.5, output: 10 } },
          { provider: 'oa', model: 'gpt-4.1-nano', price: { input: 0.1, output: 0.4 } },
          { provider: 'gm', model: 'gemini-2.5-pro', price: { input: 0.5, output: 10 } },
          { provider: 'gm', model: 'gemini-unpriced' },
        ],
      },
      {
        name: 'moderated',
        deployments: [{ provider: 'gm', model: 'gemini-2.5-flash' }],
        contentPolicyFallbacks: ['local', 'frontier'],
      },
    ],
    auto: { tiers: ['cheap', 'fast'] },
  };
}

const catalog = new Catalog(parseConfig(doc(), ENV));
const keys = (s: Segment) => s.pool.map((d) => d.key);
const route = (alias: string) => catalog.aliases.get(alias)!;

describe('Catalog: fail-over chains flattened once', () => {
  it('pool first, then fallbacks depth-first in order, each deployment once', () => {
    expect(route('fast').segments.map((s) => [s.alias, keys(s), s.fallback])).toEqual([
      ['fast', ['oa/gpt-4o-mini', 'gm/gemini-2.5-flash'], false],
      // smart's gpt-4o-mini already came from fast
      ['smart', ['an/claude-sonnet-4'], true],
      // frontier's claude-sonnet already came from smart
      ['frontier', ['an/claude-opus-4'], true],
      // reached through smart → frontier first; fast's own `local` adds nothing new
      ['local', ['ol/llama3.1'], true],
    ]);
  });

  it('no deployment appears twice in any chain', () => {
    for (const [, r] of catalog.aliases) {
      const all = r.segments.flatMap(keys);
      expect(new Set(all).size).toBe(all.length);
    }
  });

  it('an alias without fallbacks is one segment; its strategy is carried', () => {
    expect(route('local').segments).toHaveLength(1);
    expect(route('cheap').segments[0]!.strategy).toBe('cost');
    expect(route('fast').segments[0]!.strategy).toBe('weighted');
  });

  it('contentPolicyFallbacks form their own chain, all of it fallback', () => {
    expect(route('moderated').contentPolicySegments.map((s) => [s.alias, keys(s), s.fallback])).toEqual([
      ['local', ['ol/llama3.1'], true],
      ['frontier', ['an/claude-opus-4', 'an/claude-sonnet-4'], true],
    ]);
    expect(route('fast').contentPolicySegments).toEqual([]);
    // The content-policy chain never leaks into the ordinary one.
    expect(route('moderated').segments.map((s) => s.alias)).toEqual(['moderated']);
  });

  it('one Deployment object per PROVIDER/MODEL (shared runtime state keys)', () => {
    const inFast = route('fast').segments[0]!.pool[0]!;
    expect(inFast).toBe(catalog.deployments.get('oa/gpt-4o-mini'));
    expect(Object.isFrozen(inFast)).toBe(true);
    expect(inFast.pinned).toBe(false);
  });
});

describe('Catalog: price ceiling', () => {
  it('drops pool members priced above the ceiling on either side', () => {
    expect(keys(route('cheap').segments[0]!)).toEqual(['oa/gpt-4.1-nano', 'gm/gemini-unpriced']);
  });

  it('an excluded deployment is not a configured one (a pin builds it afresh, unpooled)', () => {
    expect(catalog.deployments.has('oa/gpt-4o')).toBe(false);
    const pinned = catalog.pinned('oa/gpt-4o')!;
    expect(pinned.pinned).toBe(true);
    expect(pinned.price).toBeUndefined();
  });
});

describe('Catalog: pins and names', () => {
  it('a configured PROVIDER/MODEL pin is the configured deployment', () => {
    expect(catalog.pinned('oa/gpt-4o-mini')).toBe(catalog.deployments.get('oa/gpt-4o-mini'));
  });

  it('an unlisted model of a known provider is a fresh pinned deployment with resilience defaults', () => {
    const d = catalog.pinned('an/claude-haiku-4-5')!;
    expect(d).toMatchObject({ key: 'an/claude-haiku-4-5', model: 'claude-haiku-4-5', pinned: true, weight: 1 });
    expect(d.provider.id).toBe('an');
    expect(d.capabilities.size).toBe(0);
    expect(d.timeouts.requestTimeoutMs).toBe(30_000);
    // Not cached: client-chosen strings must not grow the catalog.
    expect(catalog.deployments.has('an/claude-haiku-4-5')).toBe(false);
  });

  it('a model name may itself contain slashes', () => {
    expect(catalog.pinned('ol/library/llama3:8b')?.model).toBe('library/llama3:8b');
  });

  it.each(['nope/gpt-4o', 'fast', '/gpt-4o', 'oa/', ''])('%j is not a pin', (target) => {
    expect(catalog.pinned(target)).toBeUndefined();
  });

  it('modelNames lists the aliases and auto', () => {
    expect(catalog.modelNames()).toEqual(['fast', 'smart', 'frontier', 'local', 'cheap', 'moderated', 'auto']);
    const noAuto = new Catalog(parseConfig({ ...doc(), auto: undefined }, ENV));
    expect(noAuto.modelNames()).not.toContain('auto');
    expect(noAuto.autoTiers).toBeUndefined();
  });
});

describe('Catalog: per-pool deployment settings', () => {
  // Regression (was a bug): the constructor reuses the first Deployment built for a PROVIDER/MODEL
  // (`this.deployments.get(key) ?? makeDeployment(...)`), so a later alias's weight,
  // price, capabilities and contextWindow for the same model are silently ignored.
  // Weight is relative within a pool, so `b` here routes 5:1 instead of 1:1.
  it("each alias's pool keeps its own weight for a shared model", () => {
    const c = new Catalog(
      parseConfig(
        {
          providers: [{ id: 'sim', type: 'simulated' }],
          models: [
            { name: 'a', deployments: [{ provider: 'sim', model: 'x', weight: 5 }] },
            {
              name: 'b',
              deployments: [
                { provider: 'sim', model: 'x', weight: 1 },
                { provider: 'sim', model: 'y', weight: 1 },
              ],
            },
          ],
        },
        {},
      ),
    );
    expect(c.aliases.get('b')!.segments[0]!.pool.map((d) => d.weight)).toEqual([1, 1]);
  });
});
