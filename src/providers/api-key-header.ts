/**
 * The header a provider's `apiKey` is sent in. The names live in
 * config/defaults.ts (API_KEY_HEADERS) because the config checks read them too:
 * a configured header of the same name would go out beside this one.
 */
import { API_KEY_HEADERS } from '../config/defaults.js';
import type { ProviderConfig } from '../config/types.js';

/** `{ NAME: value }` for a provider with a key (a Bearer token where the header is `authorization`), else `{}`. */
export function apiKeyHeader(p: ProviderConfig): Record<string, string> {
  const name = API_KEY_HEADERS[p.type];
  if (!p.apiKey || name === undefined) return {};
  return { [name]: name === 'authorization' ? `Bearer ${p.apiKey}` : p.apiKey };
}
