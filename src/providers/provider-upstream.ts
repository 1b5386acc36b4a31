/**
 * The HttpUpstream an adapter talks through, as the provider's config sets it up:
 * `maxConnections` sockets, the adapter's auth headers with the configured
 * `headers` over them (so a provider can replace any), and the adapter's reading
 * of error answers. Anthropic builds its own: it lower-cases the configured
 * headers to replace its versioned ones whatever their spelling.
 */
import type { ProviderConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { HttpUpstream, type ErrorMapper } from './http.js';

export function providerUpstream(
  provider: ProviderConfig,
  clock: Clock,
  auth: Record<string, string>,
  errorFromResponse?: ErrorMapper,
  baseUrl = provider.baseUrl,
): HttpUpstream {
  return new HttpUpstream(baseUrl, {
    connections: provider.maxConnections,
    headers: { ...auth, ...provider.headers },
    clock,
    errorFromResponse,
  });
}
