/** Whether a listen address is reachable only from this machine. */
import { isIPv4, isIPv6 } from 'node:net';

export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost') return true;
  if (isIPv4(h)) return h.startsWith('127.');
  if (!isIPv6(h)) return false;
  // The URL parser canonicalises IPv6 (0:0:0:0:0:0:0:1 → ::1, ::ffff:127.0.0.1 → ::ffff:7f00:1).
  const canonical = new URL(`http://[${h}]`).hostname.slice(1, -1);
  return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:/.test(canonical);
}
