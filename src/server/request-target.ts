/**
 * The request target as routes match it. HTTP/1.1 clients talking to a proxy send
 * the absolute form, `POST http://host:port/v1/chat/completions`, and RFC 9112
 * §3.2.2 has every server accept it; node hands it over as it came.
 */
const ABSOLUTE = /^https?:\/\/[^/?#]*/i;
const SLASH = 0x2f;

/**
 * An absolute http(s) target's path and query (`/` when it has no path); undefined
 * for anything else (`*`, garbage), which keeps its 404. The authority is dropped
 * unread: request data never chooses an upstream, and nothing else reads it.
 */
export function originFormOf(target: string): string | undefined {
  const authority = ABSOLUTE.exec(target);
  if (authority === null) return undefined;
  const rest = target.slice(authority[0].length);
  return rest.charCodeAt(0) === SLASH ? rest : `/${rest}`;
}
