/**
 * The routes as data, for what must know them without dispatching: a CORS preflight
 * (which methods to grant) and the count of refusals. Mirrors the switch in routes.ts,
 * which stays a switch so the hot path is one string comparison or two.
 */

/** The methods a route takes (its `Allow`), undefined for no route. */
export function routeMethods(path: string): 'POST' | 'GET, HEAD' | undefined {
  if (routedEndpoint(path) !== undefined) return 'POST';
  switch (path) {
    case '/v1/models':
    case '/models':
    case '/healthz':
    case '/readyz':
    case '/metrics':
    case '/traces':
      return 'GET, HEAD';
  }
  return path.startsWith('/v1/models/') || path.startsWith('/models/') || path.startsWith('/traces/') ? 'GET, HEAD' : undefined;
}

/** The routed endpoint a POST to `path` reaches, if any. */
export function routedEndpoint(path: string): 'chat' | 'embeddings' | undefined {
  switch (path) {
    case '/v1/chat/completions':
    case '/chat/completions':
      return 'chat';
    case '/v1/embeddings':
    case '/embeddings':
      return 'embeddings';
  }
  return undefined;
}
