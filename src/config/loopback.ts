/** Listen addresses: which are well-formed, and which are reachable only from this machine. */
import { isIP, isIPv4, isIPv6 } from 'node:net';

const HOSTNAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/;

/**
 * An IP address (IPv6 with or without brackets) or a DNS name. Anything else
 * (a scheme, a port, spaces, a trailing newline from a YAML block scalar) passed
 * `check` and then failed `serve` with getaddrinfo ENOTFOUND.
 */
export function isListenHost(host: string): boolean {
  return isIP(unbracket(host)) !== 0 || HOSTNAME.test(host);
}

export const LISTEN_HOST_REASON = 'must be an IP address or a hostname (no scheme, port or spaces)';

/** `[::1]` (as written in a URL) → `::1`, which is what server.listen takes. */
export function unbracket(host: string): string {
  const inner = /^\[(.*)\]$/.exec(host)?.[1];
  return inner !== undefined && isIPv6(inner) ? inner : host;
}

export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  if (!isIPv6(h)) return false;
  // The URL parser canonicalises IPv6 (0:0:0:0:0:0:0:1 → ::1, ::ffff:127.0.0.1 → ::ffff:7f00:1).
  const canonical = new URL(`http://[${h}]`).hostname.slice(1, -1);
  return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:/.test(canonical);
}
