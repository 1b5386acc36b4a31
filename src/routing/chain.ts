/**
 * Turns one request into its ordered candidate chain. Pure: catalog, request
 * requirements, privacy scope and randomness in; candidates with reasons out.
 */
import type { DataClass, KeyConfig } from '../config/types.js';
import type { Random } from '../core/clock.js';
import { GatewayError } from '../core/errors.js';
import type { Catalog, Segment } from './catalog.js';
import type { Deployment } from './deployment.js';
import { requiresLocal } from './privacy.js';
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
  /**
   * `auto` only: the tier whose chain brought it (null otherwise), whose contentPolicyFallbacks
   * its refusal moves to. Every candidate has the field, so all share one shape in the executor.
   */
  tier: string | null;
}

export interface ChainScope {
  requirements: Requirements;
  /** Only local deployments may serve (data class or key policy). */
  localOnly: boolean;
  /** What made it local-only, for the 403's words: the request's data class, and its key. */
  dataClass?: DataClass;
  key?: KeyConfig | null;
}

/** Why an external deployment was dropped from a local-only request (and how the 403 is recognised). */
const EXTERNAL = 'external (only local deployments may serve this request)';

/** The 403's reason: the key's allowExternal: false when the data class alone would not keep the request local. */
function localOnlyReason(scope: ChainScope): string {
  const key = scope.key;
  if (key && !key.allowExternal && !(scope.dataClass !== undefined && requiresLocal(scope.dataClass, null))) {
    return `The key '${key.id}' may use only local deployments (allowExternal: false)`;
  }
  return `The request's data class${scope.dataClass !== undefined ? ` (${scope.dataClass})` : ''} allows only local deployments`;
}

/**
 * How a segment's candidates are labelled: an alias's own pools, `auto`'s
 * tiers (`auto:ALIAS (…)`), or a pinned PROVIDER/MODEL.
 */
type Labelling = 'alias' | 'auto' | 'pinned';

/**
 * Candidates are built once: a candidate is fixed by its segment, the
 * selector's reason, its rank and its deployment, and nothing mutates one.
 * Per request only the chain array is new (candidates live as long as the
 * request, a stream's for minutes). A selector whose reasons vary without
 * bound would grow this, so past MAX_REASONS a segment's candidates are built
 * per request instead.
 */
const kCandidates = Symbol('switchyard.candidates');
type Cached = { reason: string; byRank: Candidate[][] }[];
type CachingSegment = Segment & { [kCandidates]?: Cached };
const MAX_REASONS = 16;

/** The segment's candidates for `reason`, by rank then by pool position; undefined past MAX_REASONS. */
function candidatesOf(seg: CachingSegment, reason: string): Candidate[][] | undefined {
  let reasons = seg[kCandidates];
  if (reasons === undefined) {
    // On the segment itself (a property read, where a WeakMap lookup cost more than the
    // allocations it saves), defined once and not enumerable: a spread copy of the
    // segment (auto's tiers) must not share another labelling's candidates.
    reasons = [];
    Object.defineProperty(seg, kCandidates, { value: reasons, enumerable: false });
  }
  for (let i = 0; i < reasons.length; i++) if (reasons[i]!.reason === reason) return reasons[i]!.byRank;
  if (reasons.length >= MAX_REASONS) return undefined;
  const byRank: Candidate[][] = [];
  reasons.push({ reason, byRank });
  return byRank;
}

function makeCandidate(seg: Segment, reason: string, rank: number, d: Deployment, labelling: Labelling): Candidate {
  if (labelling === 'pinned') return { deployment: d, alias: null, fallback: false, selection: 'pinned', tier: null };
  const r = rank === 0 ? reason : `${reason}, rank ${rank + 1}`;
  const label = seg.fallback ? `fallback:${seg.alias} (${r})` : r;
  if (labelling === 'auto') return { deployment: d, alias: seg.alias, fallback: seg.fallback, selection: `auto:${seg.alias} (${label})`, tier: (seg as AutoSegment).tierAlias };
  return { deployment: d, alias: seg.alias, fallback: seg.fallback, selection: label, tier: null };
}

/** `cache`: false for segments made for one request (a pinned target outside the config). */
export function orderSegments(
  segments: readonly Segment[],
  scope: ChainScope,
  random: Random,
  filtered: string[],
  labelling: Labelling = 'alias',
  cache = true,
): Candidate[] {
  const out: Candidate[] = [];
  for (const seg of segments) orderSegment(out, seg, scope, random, filtered, labelling, cache);
  return out;
}

/** Appends `seg`'s candidates that can serve, in its strategy's order; returns how many. */
function orderSegment(
  out: Candidate[],
  seg: Segment,
  scope: ChainScope,
  random: Random,
  filtered: string[],
  labelling: Labelling,
  cache: boolean,
): number {
  const before = out.length;
  const { ordered, reason } = SELECTORS[seg.strategy](seg.pool, random);
  const byRank = cache ? candidatesOf(seg, reason) : undefined;
  for (let i = 0; i < ordered.length; i++) {
    const d = ordered[i]!;
    // Locality first: a data-class refusal is a 403 whatever else the deployment lacks.
    const why = (scope.localOnly && d.provider.locality !== 'local' ? EXTERNAL : null) ?? unmetRequirement(d, scope.requirements);
    if (why) {
      filtered.push(`${d.key}: ${why}`);
      continue;
    }
    if (byRank === undefined) {
      out.push(makeCandidate(seg, reason, i, d, labelling));
      continue;
    }
    // Pools are a handful long: the position is a short scan, and the cache two array reads.
    const at = seg.pool.indexOf(d);
    const row = (byRank[i] ??= []);
    out.push((row[at] ??= makeCandidate(seg, reason, i, d, labelling)));
  }
  return out.length - before;
}

/**
 * orderSegment for one of auto's segments that shares deployments with another: those the
 * chain already has are left out. Returns how many of its deployments can serve, counting
 * those left out. Apart from orderSegment, whose body the aliases' hot path runs: with the
 * dedupe folded into it, V8 compiled that path so that buffered requests cost a third more
 * instructions (counted, bench:count), nearly all of it in young-generation collections.
 */
function orderRepeatingSegment(out: Candidate[], seg: Segment, scope: ChainScope, random: Random, filtered: string[]): number {
  let served = 0;
  const { ordered, reason } = SELECTORS[seg.strategy](seg.pool, random);
  const byRank = candidatesOf(seg, reason);
  for (let i = 0; i < ordered.length; i++) {
    const d = ordered[i]!;
    if (inChain(out, d)) {
      served++;
      continue;
    }
    const why = (scope.localOnly && d.provider.locality !== 'local' ? EXTERNAL : null) ?? unmetRequirement(d, scope.requirements);
    if (why) {
      filtered.push(`${d.key}: ${why}`);
      continue;
    }
    served++;
    const c = byRank === undefined ? makeCandidate(seg, reason, i, d, 'auto') : ((byRank[i] ??= [])[seg.pool.indexOf(d)] ??= makeCandidate(seg, reason, i, d, 'auto'));
    out.push(c);
  }
  return served;
}

function inChain(out: readonly Candidate[], d: Deployment): boolean {
  for (let i = 0; i < out.length; i++) if (out[i]!.deployment === d) return true;
  return false;
}

/** One of `auto`'s segments: which tier brought it, and whether it is that tier's own pool. */
interface AutoSegment extends Segment {
  tier: number;
  /** That tier's alias. */
  tierAlias: string;
  own: boolean;
  /** Some deployment of its pool is in another of auto's segments too: skip those the chain already has. */
  repeats: boolean;
}

/**
 * `auto`'s chain: the tiers in order, each followed by its fallbacks — those are the
 * tier's fail-over. A tier whose own pool cannot take this request at all (a capability,
 * the context size, the data class) is not a capable tier: its fallbacks (often a
 * pricier alias) wait until every tier was offered, so the cheapest capable tier comes first.
 * Which tiers are capable depends on the request, so a deployment is kept once per request
 * (where it first lands), not once at start-up: a tier's fallback that is also a later tier
 * (mini falling back to standard) must still come at that tier's place when its referrer
 * cannot serve, not after the pricier tiers.
 */
function orderAuto(segments: readonly AutoSegment[], scope: ChainScope, random: Random, filtered: string[]): Candidate[] {
  const out: Candidate[] = [];
  let deferred: AutoSegment[] | undefined;
  let incapable = -1;
  for (const seg of segments) {
    if (seg.tier === incapable) (deferred ??= []).push(seg);
    else if (orderAutoSegment(out, seg, scope, random, filtered) === 0 && seg.own) incapable = seg.tier;
  }
  if (deferred) for (const seg of deferred) orderAutoSegment(out, seg, scope, random, filtered);
  return out;
}

function orderAutoSegment(out: Candidate[], seg: AutoSegment, scope: ChainScope, random: Random, filtered: string[]): number {
  return seg.repeats ? orderRepeatingSegment(out, seg, scope, random, filtered) : orderSegment(out, seg, scope, random, filtered, 'auto', true);
}

/**
 * `auto` on /v1/embeddings: the deployments that declare `embeddings` first, in the chain's
 * order, then those that declare no features. The tiers are mostly chat aliases, and one that
 * declares nothing is assumed able (supports()): right for tools or JSON, which most chat
 * models take, but few chat models embed, so each such tier ahead of the embeddings alias cost
 * a call its upstream refused. Those that declare nothing stay, behind: an embeddings model
 * configured without capabilities still serves, and a chat model's refusal passes the request
 * on without cooling it down (resilience/classify.ts).
 */
function declaredEmbeddersFirst(chain: Candidate[]): Candidate[] {
  let declared = 0;
  for (const c of chain) if (c.deployment.capabilities.has('embeddings')) declared++;
  if (declared === 0 || declared === chain.length) return chain;
  const out: Candidate[] = [];
  for (const c of chain) if (c.deployment.capabilities.has('embeddings')) out.push(c);
  for (const c of chain) if (!c.deployment.capabilities.has('embeddings')) out.push(c);
  return out;
}

/** `auto`'s segments: each tier's chain (its pool, then its fallbacks), cheapest tier first. Fixed for a catalog, so built once. */
const AUTO_SEGMENTS = new WeakMap<Catalog, AutoSegment[]>();
function autoSegments(catalog: Catalog, tiers: readonly string[]): AutoSegment[] {
  let segments = AUTO_SEGMENTS.get(catalog);
  if (segments !== undefined) return segments;
  segments = [];
  const uses = new Map<Deployment, number>();
  for (let tier = 0; tier < tiers.length; tier++) {
    for (const seg of catalog.aliases.get(tiers[tier]!)?.segments ?? []) {
      for (const d of seg.pool) uses.set(d, (uses.get(d) ?? 0) + 1);
      segments.push({ ...seg, fallback: segments.length > 0, tier, tierAlias: tiers[tier]!, own: seg.alias === tiers[tier], repeats: false });
    }
  }
  for (const seg of segments) seg.repeats = seg.pool.some((d) => uses.get(d)! > 1);
  AUTO_SEGMENTS.set(catalog, segments);
  return segments;
}

/**
 * A tier's contentPolicyFallbacks as auto's segments (labelled `auto:ALIAS (…)`, the tier
 * carried), built once a tier: copies, as auto's chain segments are, so the alias's own
 * candidates keep their labels.
 */
const AUTO_POLICY_SEGMENTS = new WeakMap<Catalog, Map<string, AutoSegment[]>>();
function autoPolicySegments(catalog: Catalog, tierAlias: string): AutoSegment[] {
  let byTier = AUTO_POLICY_SEGMENTS.get(catalog);
  if (byTier === undefined) AUTO_POLICY_SEGMENTS.set(catalog, (byTier = new Map()));
  let segments = byTier.get(tierAlias);
  if (segments === undefined) {
    const tier = catalog.autoTiers?.indexOf(tierAlias) ?? -1;
    segments = (catalog.aliases.get(tierAlias)?.contentPolicySegments ?? []).map((seg) => ({ ...seg, tier, tierAlias, own: false, repeats: false }));
    byTier.set(tierAlias, segments);
  }
  return segments;
}

/**
 * The chain a content-policy refusal by `refused` moves to: the requested alias's
 * contentPolicyFallbacks, whichever of its chain's candidates refused. For `auto`, those of
 * the tier whose chain the refusing candidate came from, as if the client had asked for that
 * tier: a tier's own fallback refusing moves to the tier's, not the fallback's. Empty when
 * there are none (the refusal is the answer), and for a pin.
 */
export function buildContentPolicyChain(catalog: Catalog, model: string, refused: Candidate, scope: ChainScope, random: Random): Candidate[] {
  const route = catalog.aliases.get(model);
  if (route) return orderSegments(route.contentPolicySegments, scope, random, []);
  if (refused.tier === null) return [];
  return orderSegments(autoPolicySegments(catalog, refused.tier), scope, random, [], 'auto');
}

/** A pinned deployment's one-member segment, built once per configured deployment. */
const PINNED = new WeakMap<Deployment, Segment[]>();
function pinnedSegments(d: Deployment, configured: boolean): Segment[] {
  let segments = PINNED.get(d);
  if (segments === undefined) {
    segments = [{ alias: '', strategy: 'weighted', pool: [d], fallback: false }];
    // Clients choose unconfigured PROVIDER/MODEL strings: those are not kept.
    if (configured) PINNED.set(d, segments);
  }
  return segments;
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
    candidates = orderAuto(autoSegments(catalog, catalog.autoTiers), scope, random, filtered);
    if (scope.requirements.needs.includes('embeddings')) candidates = declaredEmbeddersFirst(candidates);
  } else {
    const d = catalog.pinned(model);
    if (!d) throw new GatewayError(404, 'model_not_found', `The model '${model}' does not exist: use a configured alias${catalog.autoTiers ? ', auto' : ''} or PROVIDER_ID/MODEL`, 'model');
    const configured = catalog.deployments.get(model) === d;
    candidates = orderSegments(pinnedSegments(d, configured), scope, random, filtered, 'pinned', configured);
  }
  if (candidates.length === 0) {
    const privacy = filtered.length > 0 && filtered.every((f) => f.endsWith(EXTERNAL));
    if (privacy) throw new GatewayError(403, 'policy_violation', `${localOnlyReason(scope)}, and '${model}' has none`);
    // auto may meet a deployment in several tiers' chains: name it once.
    throw new GatewayError(400, 'invalid_request', `No deployment of '${model}' can serve this request: ${[...new Set(filtered)].join('; ')}`, 'model');
  }
  return candidates;
}
