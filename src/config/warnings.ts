/**
 * What a valid config may still get wrong, said at start-up (and by `check`)
 * rather than refused: each is a legitimate choice in some setups.
 */
import { abovePriceCeiling } from '../routing/catalog.js';
import { PENDING_STRATEGIES } from '../routing/strategies/index.js';
import { API_KEY_HEADERS, DEFAULT_BASE_URLS } from './defaults.js';
import type { Config, ProviderType } from './types.js';

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
  // "*" with no client keys undoes the browser guard (server/cors.ts): any web page a user of
  // the gateway opens may call it, and spend its providers' credits.
  if (config.server.cors.origins.includes('*') && config.keys.length === 0) {
    out.push('server.cors.origins: "*" with no keys: any web page open in a browser that can reach the gateway may call it and spend provider credits (list the pages\' origins, or add keys)');
  }
  return out;
}
