/**
 * Browsers. Any page a developer visits can make their browser POST a `text/plain`
 * "simple" request to a gateway on 127.0.0.1 (no preflight needed, and the gateway
 * never looked at Content-Type): without client keys that spent provider credits.
 * Browsers put the page's origin in `Origin` on every cross-origin request and every
 * POST, so a request with an `Origin` the config does not allow is refused before its
 * body is read; one allowed gets the CORS headers a browser needs to read the answer.
 * Requests without `Origin` (SDKs, curl, servers) are not looked at.
 */
import { isIP } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../core/errors.js';

/** What a page's script may read besides the safelisted headers: the routing headers, and when to retry. */
const EXPOSE = 'x-request-id, x-switchyard-deployment, x-switchyard-selection, x-switchyard-attempts, x-switchyard-fallback, x-switchyard-overhead-ms, retry-after';
/** Granted to a preflight whose Access-Control-Request-Headers cannot be echoed. */
const ALLOW_HEADERS = 'authorization, content-type, x-request-id, x-switchyard-data-class, api-key, x-api-key';
const TOKEN_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

export class CorsPolicy {
  private readonly any: boolean;
  private readonly listed: ReadonlySet<string>;

  constructor(
    origins: readonly string[],
    /** `server.host`, lower case: a name the gateway is addressed by that no other site can claim. */
    private readonly ownHost: string,
  ) {
    this.any = origins.includes('*');
    this.listed = new Set(origins);
  }

  /** The `access-control-allow-origin` value for a request from `origin`, or undefined when it is not allowed. */
  allow(origin: string, host: string | undefined): string | undefined {
    if (this.any) return '*';
    if (this.listed.has(origin) || this.isOwn(origin, host)) return origin;
    return undefined;
  }

  /**
   * The gateway's own origin: a page it served itself. Only for a Host no other site can
   * be reached by — an IP address, `localhost`, `server.host` — because of DNS rebinding:
   * a page at http://evil.example:4000 whose name is made to resolve to 127.0.0.1 sends
   * `Host: evil.example:4000` and an Origin to match, and would pass as the gateway's own.
   */
  private isOwn(origin: string, host: string | undefined): boolean {
    if (host === undefined || !origin.startsWith('http://') || origin.length !== 7 + host.length) return false;
    return origin.slice(7) === host.toLowerCase() && this.trustedHost(host);
  }

  /**
   * A Host header no other site can make a browser send: an IP address, `localhost` or
   * `server.host` (with any port). A DNS-rebinding page sends its own name.
   */
  trustedHost(host: string | undefined): boolean {
    if (host === undefined) return false;
    const h = host.toLowerCase();
    const name = h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.replace(/:\d*$/, '');
    return name === 'localhost' || name === this.ownHost || isIP(name) !== 0;
  }
}

/** Marks a response to an allowed origin: every answer after this (routed, streamed, an error) carries the headers. */
export function exposeTo(res: ServerResponse, allowOrigin: string): void {
  res.setHeader('access-control-allow-origin', allowOrigin);
  res.setHeader('access-control-expose-headers', EXPOSE);
  res.setHeader('vary', 'origin');
}

/** A CORS preflight: OPTIONS asking, in Access-Control-Request-Method, whether it may send the real request. */
export function isPreflight(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
}

/** The preflight's answer for an allowed origin on a route that takes `methods`. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, allowOrigin: string, methods: string): void {
  const asked = req.headers['access-control-request-headers'];
  res.writeHead(204, {
    'access-control-allow-origin': allowOrigin,
    'access-control-allow-methods': methods,
    'access-control-allow-headers': asked !== undefined && TOKEN_LIST.test(asked) ? asked : ALLOW_HEADERS,
    'access-control-max-age': '600',
    vary: 'origin',
  });
  res.end();
}

export const originNotAllowed = (origin: string) =>
  new GatewayError(403, 'origin_not_allowed', `Origin '${origin.slice(0, 200)}' is not allowed: add it to server.cors.origins to let that page call the gateway from a browser`);
