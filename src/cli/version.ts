/**
 * The package's version, as its package.json says: read on first use and kept, so
 * `serve` never reads it and `--version` reads it once. Found from this module, not the
 * working directory: src/cli and dist/cli are both two levels under the package root
 * (as config/load.ts finds the demo config), in a checkout and in an installed package.
 */
import { readFileSync } from 'node:fs';

const PACKAGE_JSON = new URL('../../package.json', import.meta.url);

let version: string | undefined;

export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;
  return version;
}
