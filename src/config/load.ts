/**
 * Finding and reading the configuration file. Order (CONTRACT.md): an explicit
 * path, else $SWITCHYARD_CONFIG, else ./switchyard.yaml, else the bundled demo.
 * YAML and JSON both; syntax errors come back as `file:line:col: reason`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { ConfigError } from './errors.js';
import type { Env } from './interpolate.js';
import type { CliOverrides } from './overrides.js';
import { parseConfig } from './parse.js';
import type { Config } from './types.js';

export interface LoadOptions {
  /** `--config`: beats everything else. */
  path?: string;
  env?: Env;
  /** Where `./switchyard.yaml` and relative paths are looked up; default process.cwd(). */
  cwd?: string;
  overrides?: CliOverrides;
}

/** Which rule picked the file, for the start-up log. */
export type ConfigOrigin = 'path' | 'env' | 'cwd' | 'demo';

export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file read. */
  source: string;
  origin: ConfigOrigin;
}

// src/config and dist/config are both two levels under the package root.
export const DEMO_CONFIG_PATH = fileURLToPath(new URL('../../examples/demo.yaml', import.meta.url));

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const { file, origin } = resolveConfigPath(options.path, env, cwd);
  const doc = readConfigFile(file, cwd);
  const config = parseConfig(doc, env, { overrides: options.overrides, source: display(file, cwd) });
  return { config, source: file, origin };
}

export function resolveConfigPath(
  path: string | undefined,
  env: Env,
  cwd: string,
): { file: string; origin: ConfigOrigin } {
  if (path) return { file: resolve(cwd, path), origin: 'path' };
  const fromEnv = env.SWITCHYARD_CONFIG?.trim();
  if (fromEnv) return { file: resolve(cwd, fromEnv), origin: 'env' };
  const local = resolve(cwd, 'switchyard.yaml');
  if (existsSync(local)) return { file: local, origin: 'cwd' };
  return { file: DEMO_CONFIG_PATH, origin: 'demo' };
}

/** The parsed document in `file` (not yet validated). Throws ConfigError. */
export function readConfigFile(file: string, cwd = process.cwd()): unknown {
  const name = display(file, cwd);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : `cannot read (${code})`;
    throw new ConfigError([`${name}: ${why}`]);
  }
  const doc = /\.json$/i.test(file) ? parseJson(text, name) : parseYaml(text, name);
  if (doc === null || doc === undefined) throw new ConfigError([`${name}: the file is empty`]);
  return doc;
}

function parseYaml(text: string, name: string): unknown {
  const doc = parseDocument(text, { merge: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => located(name, e.linePos?.[0], stripYamlContext(e.message))));
  }
  try {
    return doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    throw new ConfigError([`${name}: ${err instanceof Error ? err.message : String(err)}`]);
  }
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /at position (\d+)/.exec(message);
    // V8 does not always say where; the YAML parser (a JSON superset) usually can.
    const pos = at ? lineCol(text, Number(at[1])) : parseDocument(text).errors[0]?.linePos?.[0];
    throw new ConfigError([located(name, pos, `invalid JSON: ${cleanJsonMessage(message)}`)]);
  }
}

function located(name: string, pos: { line: number; col: number } | undefined, reason: string): string {
  return pos ? `${name}:${pos.line}:${pos.col}: ${reason}` : `${name}: ${reason}`;
}

/** yaml's messages end with the position and a source excerpt; the excerpt may hold a secret. */
function stripYamlContext(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

function cleanJsonMessage(message: string): string {
  return message
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/ \(line \d+ column \d+\)$/, '');
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, col: offset - before.lastIndexOf('\n') };
}

function display(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}
