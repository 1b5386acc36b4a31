/**
 * A nesting bound for parsed request bodies. V8's JSON.parse accepts a million
 * nested `[` but JSON.stringify (and any recursive walk of the body: token
 * estimates, adapters converting tool schemas) overflows the stack at a few
 * thousand levels, so without this bound a 4 MB body could become a
 * client-caused 500 far from the edge. Checked on the parsed value rather than
 * the bytes: strings are leaves here, so the cost follows the body's structure
 * (tens of nodes for a chat request), not its text.
 */

/** Deeper than any real request (OpenAI limits tool schemas to a handful of levels). */
export const MAX_JSON_DEPTH = 256;

/** True when arrays/objects in `value` nest deeper than `limit` (recursion stops there). */
export function nestsDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (nestsDeeperThan(value[i], limit - 1)) return true;
    return false;
  }
  for (const k in value) if (nestsDeeperThan((value as Record<string, unknown>)[k], limit - 1)) return true;
  return false;
}
