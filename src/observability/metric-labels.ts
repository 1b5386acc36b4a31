/**
 * Label values for metrics come only from configured names, so the number of
 * series stays bounded whatever clients send: a client can put any string in
 * `model`, and `PROVIDER/anything` pins create deployments on demand. Lookups
 * are Maps built once from the config.
 */
import type { Config } from '../config/types.js';

export const OTHER = 'other';
export const PINNED = 'pinned';
export const AUTO = 'auto';

export class MetricLabels {
  private readonly aliases = new Set<string>();
  /** Configured `PROVIDER/MODEL` keys. */
  private readonly deployments = new Set<string>();
  /** provider id → `PROVIDER/other`, for pins of models outside every pool. */
  private readonly providerOther = new Map<string, string>();
  /** provider id → model → `PROVIDER/MODEL`, so attempts (provider, model) need no concatenation. */
  private readonly byProviderModel = new Map<string, Map<string, string>>();

  constructor(config: Pick<Config, 'models' | 'providers'>) {
    for (const p of config.providers) {
      this.providerOther.set(p.id, `${p.id}/${OTHER}`);
      this.byProviderModel.set(p.id, new Map());
    }
    for (const m of config.models) {
      this.aliases.add(m.name);
      for (const d of m.deployments) {
        const key = `${d.provider}/${d.model}`;
        this.deployments.add(key);
        this.byProviderModel.get(d.provider)?.set(d.model, key);
      }
    }
  }

  /** Every configured deployment label (series initialised at start-up). */
  configuredDeployments(): Iterable<string> {
    return this.deployments;
  }

  configuredAliases(): Iterable<string> {
    return this.aliases;
  }

  /** The alias, `auto`, `pinned` for a `PROVIDER/MODEL` of a configured provider, else `other`. */
  model(requested: string): string {
    if (this.aliases.has(requested)) return requested;
    if (requested === AUTO) return AUTO;
    const slash = requested.indexOf('/');
    if (slash > 0 && this.providerOther.has(requested.slice(0, slash))) return PINNED;
    return OTHER;
  }

  /** A configured `PROVIDER/MODEL`, else `PROVIDER/other` for a configured provider, else `other`. */
  deployment(key: string | null): string {
    if (key === null) return OTHER;
    if (this.deployments.has(key)) return key;
    const slash = key.indexOf('/');
    return (slash > 0 && this.providerOther.get(key.slice(0, slash))) || OTHER;
  }

  /** Same as `deployment`, from the parts (attempt traces carry provider and model separately). */
  deploymentOf(provider: string, model: string): string {
    const models = this.byProviderModel.get(provider);
    if (models === undefined) return OTHER;
    return models.get(model) ?? this.providerOther.get(provider)!;
  }
}
