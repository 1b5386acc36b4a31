/**
 * The routing view of the config, built once at start-up: deployments resolved,
 * price ceilings applied, and each alias's fail-over chain flattened into
 * ordered segments (its own pool, then each fallback alias's, recursively,
 * without repeats). Per request only the order inside a pool is decided.
 */
import type { Config, ModelConfig, Price, ProviderConfig, Strategy } from '../config/types.js';
import { makeDeployment, type Deployment } from './deployment.js';
import { sharedDeploymentLimits } from './shared-limits.js';

export interface Segment {
  /** Alias this pool belongs to. */
  alias: string;
  strategy: Strategy;
  pool: readonly Deployment[];
  /** True for every segment after the first: reaching it is a fallback. */
  fallback: boolean;
}

export interface AliasRoute {
  name: string;
  segments: readonly Segment[];
  /** Chain used only after a content-policy refusal. */
  contentPolicySegments: readonly Segment[];
}

/** Pinned models a provider gives a state of their own; beyond them, one shared state (see Catalog.pinnedState). */
const MAX_OWN_PINNED = 32;

/** A deployment priced above its alias's ceiling is never chosen for it (also the start-up warning's test). */
export function abovePriceCeiling(price: Price | undefined, ceiling: Price | undefined): boolean {
  return ceiling !== undefined && price !== undefined && (price.input > ceiling.input || price.output > ceiling.output);
}

export class Catalog {
  readonly providers = new Map<string, ProviderConfig>();
  readonly aliases = new Map<string, AliasRoute>();
  readonly deployments = new Map<string, Deployment>();
  readonly autoTiers: readonly string[] | undefined;
  /** Per provider, the pinned models with a state of their own (see pinnedState). */
  private readonly ownPinned = new Map<string, Set<string>>();

  constructor(private readonly config: Config) {
    for (const p of config.providers) this.providers.set(p.id, p);
    const pools = new Map<string, { model: ModelConfig; pool: Deployment[] }>();
    const limits = sharedDeploymentLimits(config.models);
    for (const m of config.models) {
      const pool: Deployment[] = [];
      for (const dc of m.deployments) {
        const provider = this.providers.get(dc.provider)!;
        // Each alias keeps its own view (weight, price, capabilities); runtime state is keyed by `key`, so it
        // is still shared, and so are its limits: the lowest any alias gives (shared-limits.ts).
        const d = makeDeployment(provider, { ...dc, ...limits.get(`${dc.provider}/${dc.model}`) }, config.resilience);
        // Said once at start-up by the config warnings (config/warnings.ts), which share this test.
        if (abovePriceCeiling(d.price, m.priceCeiling)) continue;
        if (!this.deployments.has(d.key)) this.deployments.set(d.key, d);
        pool.push(d);
      }
      pools.set(m.name, { model: m, pool });
    }
    const flatten = (start: string[], first: boolean): Segment[] => {
      const seenAlias = new Set<string>();
      const seenDep = new Set<string>();
      const out: Segment[] = [];
      const visit = (name: string) => {
        if (seenAlias.has(name)) return;
        seenAlias.add(name);
        const entry = pools.get(name);
        if (!entry) return;
        const pool = entry.pool.filter((d) => !seenDep.has(d.key));
        for (const d of pool) seenDep.add(d.key);
        if (pool.length > 0) out.push({ alias: name, strategy: entry.model.strategy, pool, fallback: !(first && out.length === 0) });
        for (const fb of entry.model.fallbacks) visit(fb);
      };
      for (const s of start) visit(s);
      return out;
    };
    for (const m of config.models) {
      this.aliases.set(m.name, {
        name: m.name,
        segments: flatten([m.name], true),
        contentPolicySegments: flatten(m.contentPolicyFallbacks, false),
      });
    }
    this.autoTiers = config.auto?.tiers;
  }

  /** `model` names something to route to: an alias, `auto` when tiers are configured, or PROVIDER_ID/MODEL of a configured provider. */
  routes(model: string): boolean {
    return this.aliases.has(model) || (model === 'auto' && this.autoTiers !== undefined) || this.pinned(model) !== undefined;
  }

  /** `PROVIDER_ID/MODEL`: the configured deployment, or a fresh unpooled one (not cached: clients choose these strings). */
  pinned(target: string): Deployment | undefined {
    const slash = target.indexOf('/');
    if (slash <= 0 || slash === target.length - 1) return undefined;
    const model = target.slice(slash + 1);
    // Adapters put the model into URL paths (Azure): a dot segment would name another resource on the provider's host.
    if (model === '.' || model === '..') return undefined;
    const known = this.deployments.get(target);
    if (known) return known;
    const provider = this.providers.get(target.slice(0, slash));
    if (!provider) return undefined;
    return makeDeployment(provider, { model }, this.config.resilience, this.pinnedState(provider.id, model));
  }

  /**
   * A pinned model keeps its own breaker, cooldown and pacing once it has
   * answered (see servedPinned): a 429 on `openai/gpt-4o` must not cool
   * `openai/o3-mini` down. Before that, and past MAX_OWN_PINNED models a
   * provider, pins share one state per provider: clients choose these strings,
   * and names that never answer (typos, junk) must not take the places.
   */
  private pinnedState(providerId: string, model: string): 'own-state' | 'shared-state' {
    return this.ownPinned.get(providerId)?.has(model) ? 'own-state' : 'shared-state';
  }

  /** A pinned model answered: it is real, and gets a state of its own while places last. */
  servedPinned(d: Deployment): void {
    if (!d.pinned || d.stateKey === d.key) return;
    let own = this.ownPinned.get(d.provider.id);
    if (own === undefined) this.ownPinned.set(d.provider.id, (own = new Set()));
    if (own.size < MAX_OWN_PINNED) own.add(d.model);
  }

  /** Names for `GET /v1/models`. */
  modelNames(): string[] {
    const names = [...this.aliases.keys()];
    if (this.autoTiers) names.push('auto');
    return names;
  }
}
