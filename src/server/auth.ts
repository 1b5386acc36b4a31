/**
 * Client authentication: `Authorization: Bearer KEY` or `x-api-key`. Keys are
 * indexed once at start-up; the lookup is one Map access. Without `keys` every
 * request is anonymous (the config refuses that on a non-loopback host).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { KeyConfig } from '../config/types.js';
import { GatewayError } from '../core/errors.js';

const BEARER = /^Bearer\s+(.+)$/i;
const visibleAscii = (c: number) => c > 32 && c < 127;

export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (auth !== undefined) {
    // How every SDK sends it, checked without a regex; anything else goes the lenient way.
    if (auth.startsWith('Bearer ') && visibleAscii(auth.charCodeAt(7)) && visibleAscii(auth.charCodeAt(auth.length - 1))) return auth.slice(7);
    const m = BEARER.exec(auth.trim());
    if (m) return m[1]!.trim();
  }
  const x = headers['x-api-key'];
  return Array.isArray(x) ? x[0] : x;
}

export class Authenticator {
  private readonly byKey = new Map<string, KeyConfig>();

  constructor(keys: readonly KeyConfig[]) {
    for (const k of keys) this.byKey.set(k.key, k);
  }

  get enabled(): boolean {
    return this.byKey.size > 0;
  }

  /** The caller's key, null when auth is off; throws 401 on a missing or wrong key. */
  authenticate(headers: IncomingHttpHeaders): KeyConfig | null {
    if (this.byKey.size === 0) return null;
    const presented = presentedKey(headers);
    if (!presented) throw new GatewayError(401, 'invalid_api_key', 'Missing API key: send Authorization: Bearer KEY');
    const key = this.byKey.get(presented);
    if (!key) throw new GatewayError(401, 'invalid_api_key', 'Incorrect API key provided');
    return key;
  }
}
