/**
 * What a valid config may still get wrong, said at start-up (and by `check`)
 * rather than refused: each is a legitimate choice in some setups.
 */
import { abovePriceCeiling } from '../routing/catalog.js';
import { sharedDeploymentLimits } from '../routing/shared-limits.js';
import { PENDING_STRATEGIES } from '../routing/strategies/index.js';
import { API_KEY_HEADERS, DEFAULT_BASE_URLS } from './defaults.js';
import type { Config, ModelConfig, ProviderType } from './types.js';

/** Types whose public API (their default baseUrl) needs a key. */
const KEYED: ReadonlySet<ProviderType> = new Set(['openai', 'anthropic', 'gemini', 'cohere']);

export function configWarnings(config: Config): string[] {
  const out: string[] = [];
  config.providers.forEach((p, i) => {
    // A config may list providers whose keys are set only where they are used: their
    // requests fail over, but every one of them will be refused, so say it once here.
    // A key given as the header itself (`authorization: Bearer ${KEY}`) is a key too.
    const keyHeader = API_KEY_HEADERS[p.type];
    const headerKey = Object.keys(p.headers).some((h) => h.toLowerCase() === keyHeader);
    if (KEYED.has(p.type) && p.apiKey === undefined && !headerKey && p.baseUrl === DEFAULT_BASE_URLS[p.type]) {
      out.push(`providers[${i}].apiKey: none for the public ${p.type} API: every request to '${p.id}' will be refused (401) and fail over`);
    }
  });
  config.models.forEach((m, i) => {
    // Accepted so configs written for them keep working; until they are built, the pool is weighted.
    if (PENDING_STRATEGIES.has(m.strategy)) {
      out.push(`models[${i}].strategy: ${m.strategy} is not built yet: '${m.name}' is ordered by weight (x-switchyard-selection says "weighted (${m.strategy} pending)")`);
    }
    // The ceiling is a hard filter (routing/catalog.ts): a deployment above it is never chosen for this alias.
    m.deployments.forEach((d, j) => {
      if (abovePriceCeiling(d.price, m.priceCeiling)) {
        out.push(`models[${i}].deployments[${j}]: priced above the alias's priceCeiling: '${m.name}' never uses ${d.provider}/${d.model}`);
      }
    });
  });
  sharedLimits(config, out);
  autoTierOrder(config, out);
  // "*" with no client keys undoes the browser guard (server/cors.ts): any web page a user of
  // the gateway opens may call it, and spend its providers' credits.
  if (config.server.cors.origins.includes('*') && config.keys.length === 0) {
    out.push('server.cors.origins: "*" with no keys: any web page open in a browser that can reach the gateway may call it and spend provider credits (list the pages\' origins, or add keys)');
  }
  return out;
}

/**
 * A deployment listed in several aliases is one upstream with one pacing state: it is paced by the
 * lowest rpm and tpm given anywhere (routing/shared-limits.ts). Said where an alias asks for more, or
 * for none, since that alias will not get it.
 */
function sharedLimits(config: Config, out: string[]): void {
  const limits = sharedDeploymentLimits(config.models);
  config.models.forEach((m, i) => {
    m.deployments.forEach((d, j) => {
      const l = limits.get(`${d.provider}/${d.model}`)!;
      for (const name of ['rpm', 'tpm'] as const) {
        const lowest = l[name];
        if (lowest === undefined || d[name] === lowest) continue;
        out.push(
          `models[${i}].deployments[${j}].${name}: ${d[name] ?? 'unset'} in '${m.name}', but ${d.provider}/${d.model} is given ${name} ${lowest} elsewhere: one upstream, paced by the lowest (${lowest}) in every alias`,
        );
      }
    });
  });
}

/** What an alias's own pool costs at the least (input + output per 1M tokens, as the cost strategy sums them); undefined when unpriced. */
function fromPrice(m: ModelConfig): number | undefined {
  let least: number | undefined;
  for (const d of m.deployments) {
    if (d.price === undefined || abovePriceCeiling(d.price, m.priceCeiling)) continue;
    const p = d.price.input + d.price.output;
    if (least === undefined || p < least) least = p;
  }
  return least;
}

/**
 * `auto` tries its tiers in the order listed and compares no prices (routing/chain.ts): a tier
 * listed after a pricier one is reached only when that one cannot serve. Said, not refused: an
 * operator may rank by quality, or price a tier by what its fallbacks cost.
 */
function autoTierOrder(config: Config, out: string[]): void {
  let priciest: { name: string; price: number } | undefined;
  config.auto?.tiers.forEach((name, i) => {
    const m = config.models.find((x) => x.name === name);
    const price = m && fromPrice(m);
    if (price === undefined) return;
    if (priciest !== undefined && price < priciest.price) {
      out.push(`auto.tiers[${i}]: '${name}' (from ${price} USD per 1M tokens, input + output) is listed after the pricier '${priciest.name}' (from ${priciest.price}): auto tries tiers in the order listed, so list them cheapest first`);
    }
    if (priciest === undefined || price > priciest.price) priciest = { name, price };
  });
}
