/**
 * Paths in problem messages, written the way a user reads their file:
 * `providers[0].baseUrl`, `models[1].deployments[0].provider`.
 */

export type PathSegment = string | number;

const IDENT = /^[A-Za-z_$][\w$-]*$/;

export function formatPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (IDENT.test(s)) out += out === '' ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out === '' ? '(root)' : out;
}

/** `path: reason`, the one shape every configuration problem takes. */
export function problem(segments: readonly PathSegment[], reason: string): string {
  return `${formatPath(segments)}: ${reason}`;
}
