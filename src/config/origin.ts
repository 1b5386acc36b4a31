/**
 * `server.cors.origins`: each an origin exactly as a browser sends it in `Origin`
 * (the gateway matches by string equality, so `https://App.example.com/` would
 * silently match nothing), or `*`.
 */
const FORM = 'scheme://host[:port], such as https://app.example.com, or "*"';
/** An origin of a scheme other than http(s): lower-case scheme, `://`, a host, nothing after (file:// pages send `null`). */
const OTHER_SCHEME = /^[a-z][a-z0-9+.-]*:\/\/[^\s/?#]+$/;

/** Why `s` is not an origin the gateway can match; undefined when it is one. */
export function originProblem(s: string): string | undefined {
  if (s === '*') return undefined;
  if (s.includes('*')) return `wildcards are not supported: list each origin, or use "*" alone (${FORM})`;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return `must be an origin: ${FORM}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    // Browser extensions and app webviews send origins of their own schemes (chrome-extension://ID,
    // app://obsidian.md, tauri://localhost), which URL cannot serialise: matched as written.
    return OTHER_SCHEME.test(s) ? undefined : `must be an origin: ${FORM}`;
  }
  // The URL's own origin is the browser's serialisation: lower case, no default port, no path.
  if (url.origin !== s) return `must be written as browsers send it: ${url.origin} (no path or trailing slash, no default port, lower case)`;
  return undefined;
}
