/**
 * Turns one request into its ordered candidate chain. Pure: catalog, request
 * requirements, privacy scope and randomness in; candidates with reasons out.
 */
import type { Random } from '../core/clock.js';
import { GatewayError } from '../core/errors.js';
import type { Catalog, Segment } from './catalog.js';
import type { Deployment } from './deployment.js';
import { unmetRequirement, type Requirements } from './requirements.js';
import { SELECTORS } from './strategies/index.js';

export interface Candidate {
  deployment: Deployment;
  /** Alias whose pool it came from (null when pinned). */
  alias: string | null;
  /** Reached only because earlier aliases/tiers could not serve. */
  fallback: boolean;
  /** Why it is here, for x-switchyard-selection. */
  selection: string;
}

export interface ChainScope {
  requirements: Requirements;
  /** Only local deployments may serve (data class or key policy). */
  localOnly: boolean;
}

/**
 * The x-switchyard-selection text of the candidate at `rank` (0-based) of a
 * segment. The same few strings for every request of an alias: built once per
 * segment and reason, not concatenated per request (they live as long as the
 * request, a stream's for minutes).
 */
const LABELS = new WeakMap<Segment, { reason: string; labels: string[] }>();
function selectionLabel(seg: Segment, reason: string, rank: number): string {
  let cached = LABELS.get(seg);
  if (cached === undefined || cached.reason !== reason) LABELS.set(seg, (cached = { reason, labels: [] }));
  let label = cached.labels[rank];
  if (label === undefined) {
    const r = rank === 0 ? reason : `${reason}, rank ${rank + 1}`;
    label = cached.labels[rank] = seg.fallback ? `fallback:${seg.alias} (${r})` : r;
  }
  return label;
}

export function orderSegments(segments: readonly Segment[], scope: ChainScope, random: Random, filtered: string[]): Candidate[] {
  const out: Candidate[] = [];
  for (const seg of segments) {
    const { ordered, reason } = SELECTORS[seg.strategy](seg.pool, random);
    for (let i = 0; i < ordered.length; i++) {
      const d = ordered[i]!;
      // Locality first: a data-class refusal is a 403 whatever else the deployment lacks.
      const why = (scope.localOnly && d.provider.locality !== 'local' ? 'external (data class requires local)' : null) ?? unmetRequirement(d, scope.requirements);
      if (why) {
        filtered.push(`${d.key}: ${why}`);
        continue;
      }
      out.push({ deployment: d, alias: seg.alias, fallback: seg.fallback, selection: selectionLabel(seg, reason, i) });
    }
  }
  return out;
}

/** Resolve a client's `model` into candidates, or the contract's 404/403/400 error. */
export function buildChain(catalog: Catalog, model: string, scope: ChainScope, random: Random): Candidate[] {
  const filtered: string[] = [];
  let candidates: Candidate[];
  const route = catalog.aliases.get(model);
  if (route) {
    candidates = orderSegments(route.segments, scope, random, filtered);
  } else if (model === 'auto' && catalog.autoTiers) {
    // Tiers are listed cheapest first: the first tier that can serve wins, the rest are fall-backs.
    const segments: Segment[] = [];
    const seen = new Set<string>();
    for (const tier of catalog.autoTiers) {
      for (const seg of catalog.aliases.get(tier)?.segments ?? []) {
        const pool = seg.pool.filter((d) => !seen.has(d.key));
        for (const d of pool) seen.add(d.key);
        if (pool.length > 0) segments.push({ ...seg, pool, fallback: segments.length > 0 });
      }
    }
    candidates = orderSegments(segments, scope, random, filtered).map((c) => ({
      ...c,
      selection: `auto:${c.alias} (${c.selection})`,
    }));
  } else {
    const d = catalog.pinned(model);
    if (!d) throw new GatewayError(404, 'model_not_found', `The model '${model}' does not exist: use a configured alias${catalog.autoTiers ? ', auto' : ''} or PROVIDER_ID/MODEL`, 'model');
    candidates = orderSegments([{ alias: '', strategy: 'weighted', pool: [d], fallback: false }], scope, random, filtered).map((c) => ({
      ...c,
      alias: null,
      selection: 'pinned',
    }));
  }
  if (candidates.length === 0) {
    const privacy = filtered.length > 0 && filtered.every((f) => f.includes('data class'));
    if (privacy) throw new GatewayError(403, 'policy_violation', `The request's data class allows only local deployments, and '${model}' has none`);
    throw new GatewayError(400, 'invalid_request', `No deployment of '${model}' can serve this request: ${filtered.join('; ')}`, 'model');
  }
  return candidates;
}
