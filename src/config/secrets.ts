/**
 * Secrets (provider API keys, client keys, the admin key) must come from the
 * environment: a literal in the file ends up in git, in backups and in
 * screenshots. `fromEnv` (from interpolation) says which strings were made only
 * of `${...}` references.
 */
import { problem, formatPath, type PathSegment } from './path.js';

export interface SecretContext {
  fromEnv: ReadonlySet<string>;
  /** Strings that held at least one `${...}` (a header `Bearer ${KEY}`). */
  referenced: ReadonlySet<string>;
  /** A document built in code rather than read from a file may hold resolved secrets. */
  allowLiteralSecrets: boolean;
}

/** A problem when `value` is a non-empty literal at `path`; `suggested` names the variable to use. */
export function literalSecret(
  value: unknown,
  path: readonly PathSegment[],
  suggested: string,
  ctx: SecretContext,
): string | undefined {
  if (ctx.allowLiteralSecrets || typeof value !== 'string' || value === '') return undefined;
  if (ctx.fromEnv.has(formatPath(path))) return undefined;
  return problem(path, `must come from the environment, e.g. \${${suggested}}, not a literal secret`);
}

/**
 * Provider headers that carry a credential: their value must take it from the
 * environment (`Bearer ${KEY}`), as apiKey must, or the secret sits in the file.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'cookie']);

/** A problem when the header `name` at `path` holds a credential written out in the file. */
export function literalCredentialHeader(
  name: string,
  value: unknown,
  path: readonly PathSegment[],
  suggested: string,
  ctx: SecretContext,
): string | undefined {
  if (ctx.allowLiteralSecrets || typeof value !== 'string' || value === '' || !CREDENTIAL_HEADERS.has(name.toLowerCase())) return undefined;
  if (ctx.referenced.has(formatPath(path))) return undefined;
  const example = name.toLowerCase() === 'authorization' ? `Bearer \${${suggested}}` : `\${${suggested}}`;
  return problem(path, `holds a credential: it must come from the environment, e.g. "${example}", not a literal secret`);
}

/** `team-a` → `TEAM_A`: the variable name suggested for an id. */
export function envName(id: unknown): string {
  const s = typeof id === 'string' ? id.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, '') : '';
  return /^[A-Z_]/.test(s) ? s : `X_${s}`;
}
