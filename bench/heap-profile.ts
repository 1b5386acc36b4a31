/**
 * The arithmetic of `bench:alloc` (alloc.ts starts gateways when imported):
 * a V8 sampling heap profile's bytes, a request each, by function.
 */
import type { ByFunction } from './count-functions.js';

/** A node of V8's sampling heap profile: the bytes sampled in this frame itself, and its callees. */
export interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/**
 * Self bytes a request by function (`name file:line`), and their sum. `roots`
 * (each ending in a slash) are cut from file names.
 */
export function bytesByFunction(head: ProfileNode, requests: number, roots: string[]): { total: number; byFunction: ByFunction } {
  const byFunction: ByFunction = new Map();
  let total = 0;
  const walk = (n: ProfileNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    // Same naming as bench:count (`name file:line`), so the two tables read alike, and a
    // baseline checkout's files under the same relative names, so its functions pair up.
    let file = url.replace(/^file:\/\//, '');
    for (const root of roots) if (file.startsWith(root)) file = file.slice(root.length);
    const name = `${functionName || '(anonymous)'} ${file}${lineNumber >= 0 ? `:${lineNumber + 1}` : ''}`.trim();
    if (n.selfSize > 0) {
      byFunction.set(name, (byFunction.get(name) ?? 0) + n.selfSize / requests);
      total += n.selfSize / requests;
    }
    for (const c of n.children) walk(c);
  };
  walk(head);
  return { total, byFunction };
}
