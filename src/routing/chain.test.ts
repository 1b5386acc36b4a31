import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse.js';
import type { Capability } from '../config/types.js';
import { seededRandom, type Random } from '../core/clock.js';
import { GatewayError } from '../core/errors.js';
import { Catalog } from './catalog.js';
import { buildChain, buildContentPolicyChain, type Candidate, type ChainScope } from './chain.js';
import { requiresLocal } from './privacy.js';
import { SELECTORS } from './strategies/index.js';
import { chatRequirements, embeddingsRequirements } from './requirements.js';

const HALF: Random = () => 0.5;

const ENV = { OA_KEY: 'sk-oa', AN_KEY: 'sk-an', GM_KEY: 'gm-key', TEAM_KEY: 'team', LOCAL_KEY: 'local' };

const config = parseConfig(
  {
    providers: [
      { id: 'oa', type: 'openai', apiKey: '${OA_KEY}' },
      { id: 'an', type: 'anthropic', apiKey: '${AN_KEY}' },
      { id: 'gm', type: 'gemini', apiKey: '${GM_KEY}' },
      { id: 'ol', type: 'ollama' },
      { id: 'sim', type: 'simulated' },
      // An OpenAI-compatible server on this machine: external by type, local by declaration.
      { id: 'vllm', type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', locality: 'local' },
    ],
    models: [
      {
        name: 'fast',
        deployments: [
          { provider: 'oa', model: 'gpt-4o-mini', weight: 3, contextWindow: 128_000, capabilities: ['tools', 'vision', 'json'] },
          { provider: 'gm', model: 'gemini-2.5-flash', weight: 1 },
        ],
        fallbacks: ['smart', 'local'],
      },
      {
        name: 'smart',
        deployments: [{ provider: 'an', model: 'claude-sonnet-4', contextWindow: 200_000, capabilities: ['tools', 'vision', 'json', 'prefill'] }],
        fallbacks: ['local'],
      },
      {
        name: 'local',
        deployments: [
          { provider: 'ol', model: 'llama3.1', contextWindow: 8192, capabilities: ['tools'] },
          { provider: 'sim', model: 'echo', contextWindow: 4096 },
        ],
      },
      {
        name: 'trio',
        deployments: [
          { provider: 'sim', model: 'a', weight: 1 },
          { provider: 'sim', model: 'b', weight: 2 },
          { provider: 'sim', model: 'c', weight: 7 },
        ],
      },
      {
        name: 'cloud',
        deployments: [
          { provider: 'oa', model: 'gpt-4.1', capabilities: ['json'] },
          { provider: 'an', model: 'claude-haiku' },
        ],
      },
      {
        name: 'cheap',
        strategy: 'cost',
        priceCeiling: { input: 1, output: 4 },
        deployments: [
          { provider: 'oa', model: 'gpt-4o', price: { input: 2.5, output: 10 } },
          { provider: 'gm', model: 'gemini-unpriced' },
          { provider: 'oa', model: 'gpt-4.1-nano', price: { input: 0.1, output: 0.5 } },
          { provider: 'gm', model: 'gemini-2.5-flash-lite', price: { input: 0.1, output: 0.4 } },
        ],
      },
      { name: 'onprem', deployments: [{ provider: 'vllm', model: 'qwen3' }] },
    ],
    auto: { tiers: ['cheap', 'trio', 'smart'] },
    keys: [
      { id: 'team', key: '${TEAM_KEY}' },
      { id: 'local-only', key: '${LOCAL_KEY}', allowExternal: false, dataClass: 'public' },
    ],
  },
  ENV,
);
const catalog = new Catalog(config);

const scope = (needs: Capability[] = [], estimatedTokens = 10, localOnly = false): ChainScope => ({
  requirements: { needs, estimatedTokens, promptTokens: estimatedTokens, paceTokens: estimatedTokens },
  localOnly,
});
const PLAIN = scope();
const keys = (c: Candidate[]) => c.map((x) => x.deployment.key);

function gatewayError(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

describe('buildChain: an alias', () => {
  it('is its pool in strategy order, then its fallbacks, with reasons', () => {
    const chain = buildChain(catalog, 'fast', PLAIN, HALF);
    expect(chain.map((c) => [c.deployment.key, c.alias, c.fallback, c.selection])).toEqual([
      ['oa/gpt-4o-mini', 'fast', false, 'weighted'],
      ['gm/gemini-2.5-flash', 'fast', false, 'weighted, rank 2'],
      ['an/claude-sonnet-4', 'smart', true, 'fallback:smart (weighted)'],
      // local is reached through smart and named again by fast: tried once
      ['ol/llama3.1', 'local', true, 'fallback:local (weighted)'],
      ['sim/echo', 'local', true, 'fallback:local (weighted, rank 2)'],
    ]);
  });

  it('an unknown alias is a 404 model_not_found naming the choices', () => {
    const e = gatewayError(() => buildChain(catalog, 'fastt', PLAIN, HALF));
    expect([e.status, e.code, e.param]).toEqual([404, 'model_not_found', 'model']);
    expect(e.message).toContain("'fastt'");
    expect(e.message).toContain('auto');
  });

  it('the cost strategy orders by price, unpriced last; the priced-out one never appears', () => {
    const chain = buildChain(catalog, 'cheap', PLAIN, HALF);
    expect(chain.map((c) => [c.deployment.key, c.selection])).toEqual([
      ['gm/gemini-2.5-flash-lite', 'cost'],
      ['oa/gpt-4.1-nano', 'cost, rank 2'],
      ['gm/gemini-unpriced', 'cost, rank 3'],
    ]);
  });
});

describe('the cost selector', () => {
  it('sorts a pool once: every request gets the same order without sorting again (prices are fixed at start-up)', () => {
    const pool = catalog.aliases.get('cheap')!.segments[0]!.pool;
    const first = SELECTORS.cost(pool, HALF);
    expect(first.ordered.map((d) => d.key)).toEqual(['gm/gemini-2.5-flash-lite', 'oa/gpt-4.1-nano', 'gm/gemini-unpriced']);
    expect(SELECTORS.cost(pool, HALF).ordered).toBe(first.ordered);
    expect(pool.map((d) => d.key)).toEqual(['gm/gemini-unpriced', 'oa/gpt-4.1-nano', 'gm/gemini-2.5-flash-lite']);
    // A frozen pool is still ordered, per call.
    const frozen = Object.freeze([...pool]);
    expect(SELECTORS.cost(frozen, HALF).ordered.map((d) => d.key)).toEqual(first.ordered.map((d) => d.key));
  });
});

describe('buildChain: weighted order', () => {
  function firstPicks(alias: string, n: number, random: Random): Map<string, number> {
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const k = buildChain(catalog, alias, PLAIN, random)[0]!.deployment.key;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    return counts;
  }

  it('the first pick follows the weights (3:1) over many draws', () => {
    const n = 8000;
    const counts = firstPicks('fast', n, seededRandom(1));
    // sd of the share ≈ 0.005: ±0.025 is five sd.
    expect(Math.abs(counts.get('oa/gpt-4o-mini')! / n - 0.75)).toBeLessThan(0.025);
    expect(Math.abs(counts.get('gm/gemini-2.5-flash')! / n - 0.25)).toBeLessThan(0.025);
  });

  it('the first pick follows the weights (1:2:7) in a pool of three', () => {
    const n = 10_000;
    const counts = firstPicks('trio', n, seededRandom(2));
    expect(Math.abs(counts.get('sim/a')! / n - 0.1)).toBeLessThan(0.02);
    expect(Math.abs(counts.get('sim/b')! / n - 0.2)).toBeLessThan(0.02);
    expect(Math.abs(counts.get('sim/c')! / n - 0.7)).toBeLessThan(0.02);
  });

  it('every draw is a permutation of each pool, and the segments keep their order', () => {
    const r = seededRandom(3);
    for (let i = 0; i < 500; i++) {
      const chain = buildChain(catalog, 'fast', PLAIN, r);
      expect(new Set(keys(chain.slice(0, 2)))).toEqual(new Set(['oa/gpt-4o-mini', 'gm/gemini-2.5-flash']));
      expect(keys(chain.slice(2, 3))).toEqual(['an/claude-sonnet-4']);
      // The local pool is weighted too (1:1): its own order varies, its place does not.
      expect(new Set(keys(chain.slice(3)))).toEqual(new Set(['ol/llama3.1', 'sim/echo']));
      expect(chain.map((c) => c.fallback)).toEqual([false, false, true, true, true]);
    }
  });

  it('candidates are built once: the same segment, rank and deployment give the same object on every request (auto and pins too)', () => {
    for (const model of ['fast', 'auto', 'oa/gpt-4o-mini']) {
      const a = buildChain(catalog, model, PLAIN, HALF);
      const b = buildChain(catalog, model, PLAIN, HALF);
      expect(b).not.toBe(a);
      for (let i = 0; i < a.length; i++) expect(b[i]).toBe(a[i]);
    }
    // A deployment at another rank is another candidate (its label names the rank).
    const ranks = new Map<string, Set<string>>();
    for (let seed = 1; seed < 40; seed++) {
      buildChain(catalog, 'trio', PLAIN, seededRandom(seed)).forEach((c) => ranks.set(c.deployment.key, (ranks.get(c.deployment.key) ?? new Set()).add(c.selection)));
    }
    expect(ranks.get('sim/a')).toEqual(new Set(['weighted', 'weighted, rank 2', 'weighted, rank 3']));
  });

  it('a pin outside the config is built per request (clients choose those strings, so nothing of them is kept)', () => {
    const a = buildChain(catalog, 'an/claude-haiku-4-5', PLAIN, HALF);
    const b = buildChain(catalog, 'an/claude-haiku-4-5', PLAIN, HALF);
    expect(b[0]).not.toBe(a[0]);
    expect(b[0]).toEqual(a[0]);
  });

  it('the same random sequence gives the same chain', () => {
    expect(keys(buildChain(catalog, 'trio', PLAIN, seededRandom(42)))).toEqual(keys(buildChain(catalog, 'trio', PLAIN, seededRandom(42))));
  });
});

describe('buildChain: auto', () => {
  it('walks the tiers in order (each with its fallbacks), every tier after the first a fallback', () => {
    const chain = buildChain(catalog, 'auto', PLAIN, HALF);
    expect(chain.map((c) => [c.alias, c.fallback])).toEqual([
      ['cheap', false],
      ['cheap', false],
      ['cheap', false],
      ['trio', true],
      ['trio', true],
      ['trio', true],
      ['smart', true],
      ['local', true],
      ['local', true],
    ]);
    expect(chain[0]!.selection).toBe('auto:cheap (cost)');
    expect(chain[3]!.selection).toBe('auto:trio (fallback:trio (weighted))');
    expect(new Set(keys(chain)).size).toBe(chain.length);
  });

  it('the cheapest tier that can serve comes first', () => {
    // Only smart declares prefill; the cheap and trio tiers are skipped.
    const chain = buildChain(catalog, 'auto', scope(['prefill']), HALF);
    expect(keys(chain)).toEqual(['an/claude-sonnet-4']);
    expect(chain[0]!.selection).toBe('auto:smart (fallback:smart (weighted))');
  });

  it("a tier that cannot serve the request does not put its fallbacks before the next, cheaper capable tier", () => {
    // mini falls back to premium when it fails; a tools request mini cannot take at all goes to
    // standard, the cheapest capable tier, not to premium through mini's fallback.
    const tiered = new Catalog(
      parseConfig(
        {
          providers: [{ id: 'sim', type: 'simulated' }],
          models: [
            { name: 'mini', deployments: [{ provider: 'sim', model: 'mini', capabilities: ['json'] }], fallbacks: ['premium'] },
            { name: 'standard', deployments: [{ provider: 'sim', model: 'standard', capabilities: ['tools'] }] },
            { name: 'premium', deployments: [{ provider: 'sim', model: 'premium', capabilities: ['tools', 'json'] }] },
          ],
          auto: { tiers: ['mini', 'standard', 'premium'] },
        },
        {},
      ),
    );
    const tools = buildChain(tiered, 'auto', scope(['tools']), HALF);
    expect(keys(tools)).toEqual(['sim/standard', 'sim/premium']);
    expect(tools[0]!.selection).toBe('auto:standard (fallback:standard (weighted))');
    // A tier that can serve keeps its fallbacks before the next tier (fail-over order, as documented).
    expect(keys(buildChain(tiered, 'auto', scope(['json']), HALF))).toEqual(['sim/mini', 'sim/premium']);
    expect(keys(buildChain(tiered, 'auto', PLAIN, HALF))).toEqual(['sim/mini', 'sim/premium', 'sim/standard']);
    // The same for a context too long for the first tier, and for local-only data.
    const small = new Catalog(
      parseConfig(
        {
          providers: [{ id: 'sim', type: 'simulated' }, { id: 'oa', type: 'openai', apiKey: '${OA_KEY}' }],
          models: [
            { name: 'mini', deployments: [{ provider: 'sim', model: 'mini', contextWindow: 4096 }], fallbacks: ['premium'] },
            { name: 'standard', deployments: [{ provider: 'sim', model: 'standard' }] },
            { name: 'premium', deployments: [{ provider: 'oa', model: 'premium' }] },
          ],
          auto: { tiers: ['mini', 'standard', 'premium'] },
        },
        ENV,
      ),
    );
    expect(keys(buildChain(small, 'auto', scope([], 10_000), HALF))).toEqual(['sim/standard', 'oa/premium']);
  });

  it("a tier that cannot serve does not carry a later tier it falls back to past the tiers between them", () => {
    // mini falls back to the next tier up. A tools request mini cannot take goes to standard, the
    // cheapest capable tier, before frontier; built once at start-up without repeats, standard sat
    // in mini's fallbacks only, and so was deferred after frontier.
    const ladder = new Catalog(
      parseConfig(
        {
          providers: [{ id: 'sim', type: 'simulated' }],
          models: [
            { name: 'mini', deployments: [{ provider: 'sim', model: 'mini', capabilities: ['json'] }], fallbacks: ['standard'] },
            { name: 'standard', deployments: [{ provider: 'sim', model: 'standard', capabilities: ['tools'] }] },
            { name: 'frontier', deployments: [{ provider: 'sim', model: 'frontier', capabilities: ['tools'] }] },
          ],
          auto: { tiers: ['mini', 'standard', 'frontier'] },
        },
        {},
      ),
    );
    const tools = buildChain(ladder, 'auto', scope(['tools']), HALF);
    expect(keys(tools)).toEqual(['sim/standard', 'sim/frontier']);
    expect(tools[0]!.selection).toBe('auto:standard (fallback:standard (weighted))');
    // Each deployment once, where it first lands, whichever tiers could serve.
    expect(keys(buildChain(ladder, 'auto', PLAIN, HALF))).toEqual(['sim/mini', 'sim/standard', 'sim/frontier']);
    // A deployment ruled out in several tiers' chains is named once in the 400.
    const e = gatewayError(() => buildChain(ladder, 'auto', scope(['vision']), HALF));
    expect(e.message).toBe("No deployment of 'auto' can serve this request: sim/mini: lacks vision; sim/standard: lacks vision; sim/frontier: lacks vision");
  });

  it('without auto.tiers, "auto" is an unknown model', () => {
    const bare = new Catalog(parseConfig({ providers: [{ id: 'sim', type: 'simulated' }], models: [{ name: 'x', deployments: [{ provider: 'sim', model: 'm' }] }] }, {}));
    const e = gatewayError(() => buildChain(bare, 'auto', PLAIN, HALF));
    expect([e.status, e.code]).toEqual([404, 'model_not_found']);
    expect(e.message).not.toContain(', auto');
  });
});

describe('buildChain: auto on embeddings', () => {
  // Chat tiers that declare nothing (assumed able), one that declares tools (not able), and
  // embeddings models: one declared, reached as a tier's fallback, one tier declared, one not.
  const doc = (declare: boolean) => ({
    providers: [{ id: 'oa', type: 'openai', apiKey: '${OA_KEY}' }],
    models: [
      { name: 'fast', deployments: [{ provider: 'oa', model: 'gpt-4o-mini' }] },
      { name: 'tooled', deployments: [{ provider: 'oa', model: 'gpt-4.1', capabilities: ['tools'] }], fallbacks: ['embed'] },
      { name: 'smart', deployments: [{ provider: 'oa', model: 'gpt-4o' }], fallbacks: ['bare-embed'] },
      { name: 'embed', deployments: [{ provider: 'oa', model: 'text-embedding-3-small', ...(declare ? { capabilities: ['embeddings'] } : {}) }] },
      { name: 'bare-embed', deployments: [{ provider: 'oa', model: 'text-embedding-ada-002' }] },
      { name: 'vectors', deployments: [{ provider: 'oa', model: 'text-embedding-3-large', ...(declare ? { capabilities: ['embeddings'] } : {}) }] },
    ],
    auto: { tiers: ['fast', 'tooled', 'smart', 'vectors'] },
  });
  const declared = new Catalog(parseConfig(doc(true), ENV));
  const EMBED = { requirements: embeddingsRequirements('hello'), localOnly: false };

  it('deployments that declare embeddings come first, in tier order; those that declare nothing after, as asked before', () => {
    const chain = buildChain(declared, 'auto', EMBED, HALF);
    expect(chain.map((c) => [c.deployment.key, c.selection])).toEqual([
      ['oa/text-embedding-3-large', 'auto:vectors (fallback:vectors (weighted))'],
      // tooled cannot embed: its fallback waits behind the tiers, as for chat, yet comes before those that declare nothing.
      ['oa/text-embedding-3-small', 'auto:embed (fallback:embed (weighted))'],
      ['oa/gpt-4o-mini', 'auto:fast (weighted)'],
      ['oa/gpt-4o', 'auto:smart (fallback:smart (weighted))'],
      ['oa/text-embedding-ada-002', 'auto:bare-embed (fallback:bare-embed (weighted))'],
    ]);
    // The candidates are those of the chain, not copies.
    expect(chain[0]).toBe(buildChain(declared, 'auto', EMBED, HALF)[0]);
  });

  it('when no deployment declares embeddings the tiers keep their order', () => {
    const undeclared = new Catalog(parseConfig(doc(false), ENV));
    expect(keys(buildChain(undeclared, 'auto', EMBED, HALF))).toEqual([
      'oa/gpt-4o-mini',
      'oa/gpt-4o',
      'oa/text-embedding-ada-002',
      'oa/text-embedding-3-large',
      'oa/text-embedding-3-small',
    ]);
  });

  it('chat through auto, and embeddings through an alias, keep the order they had', () => {
    expect(keys(buildChain(declared, 'auto', PLAIN, HALF))).toEqual(['oa/gpt-4o-mini', 'oa/gpt-4.1', 'oa/text-embedding-3-small', 'oa/gpt-4o', 'oa/text-embedding-ada-002', 'oa/text-embedding-3-large']);
    expect(keys(buildChain(declared, 'smart', EMBED, HALF))).toEqual(['oa/gpt-4o', 'oa/text-embedding-ada-002']);
  });
});

describe('buildContentPolicyChain', () => {
  // Tiers mini → standard → plain. mini falls back to backup; each of mini, backup and standard
  // declares contentPolicyFallbacks of its own, plain none.
  const policed = new Catalog(
    parseConfig(
      {
        providers: [{ id: 'sim', type: 'simulated' }],
        models: [
          { name: 'mini', deployments: [{ provider: 'sim', model: 'mini', capabilities: ['json'] }], fallbacks: ['backup'], contentPolicyFallbacks: ['open-a'] },
          { name: 'backup', deployments: [{ provider: 'sim', model: 'backup', capabilities: ['json'] }], contentPolicyFallbacks: ['open-b'] },
          { name: 'standard', deployments: [{ provider: 'sim', model: 'standard', capabilities: ['tools'] }], contentPolicyFallbacks: ['open-b'] },
          { name: 'plain', deployments: [{ provider: 'sim', model: 'plain' }] },
          { name: 'open-a', deployments: [{ provider: 'sim', model: 'open-a' }] },
          { name: 'open-b', deployments: [{ provider: 'sim', model: 'open-b', capabilities: ['json'] }] },
        ],
        auto: { tiers: ['mini', 'standard', 'plain'] },
      },
      {},
    ),
  );
  const refusedBy = (chain: Candidate[], key: string) => chain.find((c) => c.deployment.key === key)!;

  it("auto: a refusal moves to the contentPolicyFallbacks of the tier whose chain brought the candidate, as the tier asked for directly would", () => {
    const chain = buildChain(policed, 'auto', PLAIN, HALF);
    expect(chain.map((c) => [c.deployment.key, c.tier])).toEqual([
      ['sim/mini', 'mini'],
      ['sim/backup', 'mini'],
      ['sim/standard', 'standard'],
      ['sim/plain', 'plain'],
    ]);
    const fromMini = buildContentPolicyChain(policed, 'auto', chain[0]!, PLAIN, HALF);
    expect(fromMini.map((c) => [c.deployment.key, c.alias, c.fallback, c.selection, c.tier])).toEqual([['sim/open-a', 'open-a', true, 'auto:open-a (fallback:open-a (weighted))', 'mini']]);
    // mini's own fallback refusing is mini's refusal: mini's policy fallbacks, not backup's.
    expect(keys(buildContentPolicyChain(policed, 'auto', refusedBy(chain, 'sim/backup'), PLAIN, HALF))).toEqual(['sim/open-a']);
    expect(keys(buildContentPolicyChain(policed, 'auto', refusedBy(chain, 'sim/standard'), PLAIN, HALF))).toEqual(['sim/open-b']);
    // A tier without any: the refusal is the answer, as for the alias.
    expect(buildContentPolicyChain(policed, 'auto', refusedBy(chain, 'sim/plain'), PLAIN, HALF)).toEqual([]);
    // Asked directly, mini moves to the same deployments, labelled as the alias's.
    const direct = buildContentPolicyChain(policed, 'mini', buildChain(policed, 'mini', PLAIN, HALF)[1]!, PLAIN, HALF);
    expect(direct.map((c) => [c.deployment.key, c.selection, c.tier])).toEqual([['sim/open-a', 'fallback:open-a (weighted)', null]]);
  });

  it('auto: the tier that served the request is the one whose fallbacks apply (a tools request skips mini)', () => {
    const tools = scope(['tools']);
    const chain = buildChain(policed, 'auto', tools, HALF);
    expect(chain.map((c) => [c.deployment.key, c.tier])).toEqual([
      ['sim/standard', 'standard'],
      ['sim/plain', 'plain'],
    ]);
    // The tier's policy fallbacks are filtered for the request as its chain is: open-b lacks tools.
    expect(buildContentPolicyChain(policed, 'auto', chain[0]!, tools, HALF)).toEqual([]);
    expect(keys(buildContentPolicyChain(policed, 'auto', chain[0]!, PLAIN, HALF))).toEqual(['sim/open-b']);
  });

  it("auto's policy candidates are built once, and the alias's own keep their labels", () => {
    const mini = buildChain(policed, 'auto', PLAIN, HALF)[0]!;
    const a = buildContentPolicyChain(policed, 'auto', mini, PLAIN, HALF);
    expect(buildContentPolicyChain(policed, 'auto', mini, PLAIN, HALF)[0]).toBe(a[0]);
    const direct = buildChain(policed, 'mini', PLAIN, HALF)[0]!;
    expect(buildContentPolicyChain(policed, 'mini', direct, PLAIN, HALF)[0]!.selection).toBe('fallback:open-a (weighted)');
  });

  it('an alias and a pin carry no tier; a pin has no policy fallbacks', () => {
    expect(buildChain(catalog, 'fast', PLAIN, HALF).every((c) => c.tier === null)).toBe(true);
    const pin = buildChain(policed, 'sim/mini', PLAIN, HALF);
    expect(pin[0]!.tier).toBeNull();
    expect(buildContentPolicyChain(policed, 'sim/mini', pin[0]!, PLAIN, HALF)).toEqual([]);
  });
});

describe('buildChain: PROVIDER/MODEL pins', () => {
  it('a configured model is its deployment, alone, with no fallbacks', () => {
    const chain = buildChain(catalog, 'oa/gpt-4o-mini', PLAIN, HALF);
    expect(chain).toHaveLength(1);
    expect(chain[0]).toMatchObject({ alias: null, fallback: false, selection: 'pinned' });
    expect(chain[0]!.deployment).toBe(catalog.deployments.get('oa/gpt-4o-mini'));
  });

  it('an unlisted model of a known provider is served as pinned', () => {
    const chain = buildChain(catalog, 'an/claude-haiku-4-5', PLAIN, HALF);
    expect(chain.map((c) => [c.deployment.key, c.deployment.pinned, c.selection])).toEqual([['an/claude-haiku-4-5', true, 'pinned']]);
  });

  it('a pin keeps the configured capabilities of a known model', () => {
    const e = gatewayError(() => buildChain(catalog, 'oa/gpt-4.1', scope(['tools']), HALF));
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_request', 'model']);
    expect(e.message).toContain('oa/gpt-4.1: lacks tools');
  });

  it.each(['openrouter/gpt-4o', 'OA/gpt-4o-mini'])('an unknown provider %j is a 404', (model) => {
    const e = gatewayError(() => buildChain(catalog, model, PLAIN, HALF));
    expect([e.status, e.code, e.param]).toEqual([404, 'model_not_found', 'model']);
  });
});

describe('buildChain: capability and context filtering', () => {
  it('drops deployments that lack a needed capability; undeclared ones are assumed capable', () => {
    expect(keys(buildChain(catalog, 'fast', scope(['vision']), HALF))).toEqual([
      'oa/gpt-4o-mini',
      'gm/gemini-2.5-flash', // declares nothing
      'an/claude-sonnet-4',
      'sim/echo', // declares nothing; ol declares [tools] only
    ]);
    expect(keys(buildChain(catalog, 'cloud', scope(['tools']), HALF))).toEqual(['an/claude-haiku']);
    expect(keys(buildChain(catalog, 'cloud', scope(['json']), HALF))).toEqual(['oa/gpt-4.1', 'an/claude-haiku']);
  });

  it('prefill is never assumed: only a deployment that declares it serves', () => {
    const chain = buildChain(catalog, 'fast', scope(['prefill']), HALF);
    expect(keys(chain)).toEqual(['an/claude-sonnet-4']);
    expect(chain[0]).toMatchObject({ fallback: true, selection: 'fallback:smart (weighted)' });
  });

  it('a 400 names every deployment and why it was dropped', () => {
    const e = gatewayError(() => buildChain(catalog, 'local', scope(['prefill']), HALF));
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_request', 'model']);
    expect(e.message).toBe("No deployment of 'local' can serve this request: ol/llama3.1: lacks prefill; sim/echo: lacks prefill");

    const emb = gatewayError(() => buildChain(catalog, 'cloud', scope(['embeddings']), HALF));
    expect(emb.message).toBe("No deployment of 'cloud' can serve this request: oa/gpt-4.1: lacks embeddings; an/claude-haiku: lacks embeddings");
  });

  it('drops deployments whose context window is too small; unknown windows stay', () => {
    expect(keys(buildChain(catalog, 'fast', scope([], 150_000), HALF))).toEqual(['gm/gemini-2.5-flash', 'an/claude-sonnet-4']);
    const e = gatewayError(() => buildChain(catalog, 'local', scope([], 10_000), HALF));
    expect(e.status).toBe(400);
    expect(e.message).toContain('ol/llama3.1: context window 8192 too small; sim/echo: context window 4096 too small');
  });

  it('works from a real request: tools + an image', () => {
    const req = chatRequirements({
      model: 'fast',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'data:,' } }] }],
      tools: [{ type: 'function', function: { name: 'lookup' } }],
    });
    expect(keys(buildChain(catalog, 'fast', { requirements: req, localOnly: false }, HALF))).toEqual([
      'oa/gpt-4o-mini',
      'gm/gemini-2.5-flash',
      'an/claude-sonnet-4',
      'sim/echo',
    ]);
  });
});

describe('buildChain: privacy', () => {
  const LOCAL = scope([], 10, true);

  it('local-only requests keep only local deployments, wherever they sit in the chain', () => {
    const chain = buildChain(catalog, 'fast', LOCAL, HALF);
    expect(chain.map((c) => [c.deployment.key, c.fallback, c.selection])).toEqual([
      ['ol/llama3.1', true, 'fallback:local (weighted)'],
      ['sim/echo', true, 'fallback:local (weighted, rank 2)'],
    ]);
  });

  it('locality is the provider\'s declaration, not its type', () => {
    expect(keys(buildChain(catalog, 'onprem', LOCAL, HALF))).toEqual(['vllm/qwen3']);
  });

  it('an alias with no local deployment is a 403 policy_violation', () => {
    const e = gatewayError(() => buildChain(catalog, 'cloud', LOCAL, HALF));
    expect([e.status, e.code]).toEqual([403, 'policy_violation']);
    expect(e.message).toContain('data class');
  });

  it('a pin to an external provider is refused the same way; a local pin is fine', () => {
    expect(gatewayError(() => buildChain(catalog, 'an/claude-haiku-4-5', LOCAL, HALF)).status).toBe(403);
    expect(keys(buildChain(catalog, 'ol/qwen3:8b', LOCAL, HALF))).toEqual(['ol/qwen3:8b']);
  });

  it('a local deployment that cannot serve makes it a 400, not a 403', () => {
    const e = gatewayError(() => buildChain(catalog, 'fast', scope(['prefill'], 10, true), HALF));
    expect(e.status).toBe(400);
    expect(e.message).toContain('ol/llama3.1: lacks prefill');
  });

  it('a key with allowExternal: false keeps even public requests local', () => {
    const key = config.keys.find((k) => k.id === 'local-only')!;
    const localOnly = requiresLocal(key.dataClass, key);
    expect(localOnly).toBe(true);
    expect(keys(buildChain(catalog, 'fast', scope([], 10, localOnly), HALF))).toEqual(['ol/llama3.1', 'sim/echo']);
    const team = config.keys.find((k) => k.id === 'team')!;
    expect(keys(buildChain(catalog, 'fast', scope([], 10, requiresLocal('confidential', team)), HALF))).toEqual(['ol/llama3.1', 'sim/echo']);
  });

  it("the 403 names what made the request local-only: the key's allowExternal: false for public data, else the data class", () => {
    const key = config.keys.find((k) => k.id === 'local-only')!;
    const byKey = gatewayError(() => buildChain(catalog, 'cloud', { ...scope([], 10, true), dataClass: 'public', key }, HALF));
    expect([byKey.status, byKey.code]).toEqual([403, 'policy_violation']);
    expect(byKey.message).toBe("The key 'local-only' may use only local deployments (allowExternal: false), and 'cloud' has none");
    const byClass = gatewayError(() => buildChain(catalog, 'cloud', { ...scope([], 10, true), dataClass: 'restricted', key }, HALF));
    expect(byClass.message).toBe("The request's data class (restricted) allows only local deployments, and 'cloud' has none");
    // A 400 lists the external ones for what they are, not as a data-class matter.
    const mixed = gatewayError(() => buildChain(catalog, 'fast', { ...scope(['prefill'], 10, true), dataClass: 'public', key }, HALF));
    expect(mixed.message).toContain('oa/gpt-4o-mini: external (only local deployments may serve this request)');
  });

  // Regression (was a bug): orderSegments checks capabilities before locality, so an external deployment
  // that also lacks a capability is filed under "lacks tools" rather than the data class,
  // and the 403 test (every reason mentions the data class) fails: a 400 comes back
  // although no local deployment exists at all.
  it('no local deployment is a 403 even when an external one also lacks a capability', () => {
    const e = gatewayError(() => buildChain(catalog, 'cloud', scope(['tools'], 10, true), HALF));
    expect([e.status, e.code]).toEqual([403, 'policy_violation']);
  });
});

describe('buildChain: purity', () => {
  it('does not change the catalog', () => {
    const before = JSON.stringify([...catalog.aliases.values()].map((r) => r.segments.map((s) => s.pool.map((d) => d.key))));
    for (let i = 0; i < 20; i++) buildChain(catalog, 'trio', PLAIN, seededRandom(i));
    buildChain(catalog, 'auto', scope(['vision'], 10, true), HALF);
    const after = JSON.stringify([...catalog.aliases.values()].map((r) => r.segments.map((s) => s.pool.map((d) => d.key))));
    expect(after).toBe(before);
  });
});
