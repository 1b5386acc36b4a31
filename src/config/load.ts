/**
 * Finding and reading the configuration file. Order (CONTRACT.md): an explicit
 * path, else $SWITCHYARD_CONFIG, else ./switchyard.yaml, else the bundled demo.
 * YAML and JSON both; syntax errors come back as `file:line:col: reason`.
 */
import { isUtf8 } from 'node:buffer';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument, type YAMLError } from 'yaml';
import { ConfigError } from './errors.js';
import { jsonErrorOffset } from './json-error-offset.js';
import { MAX_DEPTH, type Env } from './interpolate.js';
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
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : `cannot read (${code})`;
    throw new ConfigError([`${name}: ${why}`]);
  }
  const text = decodeUtf8(bytes, name).replace(/^\uFEFF/, '');
  const doc = /\.json$/i.test(file) ? parseJson(text, name) : parseYaml(text, name);
  if (doc === null || doc === undefined) throw new ConfigError([`${name}: the file is empty`]);
  return doc;
}

/**
 * A lenient decode would turn each bad byte into U+FFFD and quietly change a
 * model name or a header (a file saved as Latin-1): refuse it, saying where.
 */
function decodeUtf8(bytes: Buffer, name: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    // The longest prefix that decodes (a sequence cut at the end is not an error when streaming).
    let lo = 0;
    let hi = bytes.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
        lo = mid;
      } catch {
        hi = mid - 1;
      }
    }
    // A lead byte followed by a bad one decodes as a prefix (it might be completed): step back to it.
    while (lo > 0 && !isUtf8(bytes.subarray(0, lo))) lo--;
    const before = bytes.subarray(0, lo);
    const line = before.filter((b) => b === 0x0a).length + 1;
    // In characters, as the YAML parser counts (the prefix is valid UTF-8; a BOM is not a column).
    const col = before.subarray(before.lastIndexOf(0x0a) + 1).toString('utf8').replace(/^\uFEFF/, '').length + 1;
    throw new ConfigError([located(name, { line, col }, 'not valid UTF-8 (save the file as UTF-8)')]);
  }
}

function parseYaml(text: string, name: string): unknown {
  // resolveKnownTags: false, so YAML 1.1 tags (!!set, !!omap, !!timestamp, !!binary) are not
  // turned into a Set, Map, Date or bytes that the schema would read as an empty object,
  // dropping what they hold; like any unknown tag they are refused below instead.
  // schema: 'core' even under a `%YAML 1.1` directive, which would otherwise switch to the 1.1
  // schema, where those tags are known again (and yes/no, dates and 0777 read as 1.1 reads them).
  // logLevel: the problems are reported here, not as process warnings on stderr.
  const doc = parseDocument(text, { merge: true, prettyErrors: true, schema: 'core', resolveKnownTags: false, logLevel: 'error' });
  const tags = doc.warnings.filter((w) => w.code === 'TAG_RESOLVE_FAILED');
  if (doc.errors.length > 0 || tags.length > 0) {
    // A parser out of stack may say so more than once, a column apart: once is enough.
    const errors = doc.errors.filter((e, i) => e.code !== 'RESOURCE_EXHAUSTION' || doc.errors.findIndex((f) => f.code === e.code) === i);
    throw new ConfigError([...errors, ...tags].map((e) => located(name, e.linePos?.[0], yamlReason(e.code, e.message))));
  }
  try {
    return doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    throw new ConfigError([`${name}: ${err instanceof Error ? err.message : String(err)}`]);
  }
}

function parseJson(text: string, name: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /at position (\d+)/.exec(message);
    // V8 does not always say where (a trailing comma before `]`, a misspelt literal, an end
    // that comes too soon); nor could the YAML parser, which takes a trailing comma and `tru`.
    const offset = at ? Number(at[1]) : jsonErrorOffset(text);
    const pos = offset === undefined ? undefined : lineCol(text, offset);
    throw new ConfigError([located(name, pos, `invalid JSON: ${cleanJsonMessage(message)}`)]);
  }
  // JSON.parse keeps the last of two equal keys without a word, so `"port": 1, "port": 2`
  // would run on 2; YAML refuses it, and so does this (the YAML parser reads JSON too).
  let duplicates: YAMLError[] = [];
  try {
    duplicates = parseDocument(text).errors.filter((e) => e.code === 'DUPLICATE_KEY');
  } catch {
    // Too deep for the YAML parser's recursion: the depth limit in interpolate.ts reports it.
  }
  if (duplicates.length > 0) {
    throw new ConfigError(duplicates.map((e) => located(name, e.linePos?.[0], 'duplicate key (the same key twice in one object)')));
  }
  return value;
}

function located(name: string, pos: { line: number; col: number } | undefined, reason: string): string {
  return pos ? `${name}:${pos.line}:${pos.col}: ${reason}` : `${name}: ${reason}`;
}

/** yaml's message, reworded where it speaks to a programmer rather than to whoever wrote the file. */
function yamlReason(code: string, message: string): string {
  const reason = stripYamlContext(message);
  if (code === 'MULTIPLE_DOCS') return 'more than one YAML document (a second ---): a config file holds one';
  // The parser's own stack ran out (some hundreds of levels): interpolate.ts stops at MAX_DEPTH anyway.
  if (code === 'RESOURCE_EXHAUSTION' && /call stack/i.test(reason)) return `nested too deep (more than ${MAX_DEPTH} levels)`;
  const tag = /^Unresolved tag: (.*)$/.exec(reason)?.[1];
  if (code === 'TAG_RESOLVE_FAILED' && tag !== undefined) {
    return `unsupported tag ${tag.replace(/^tag:yaml\.org,2002:/, '!!')}: write a plain value, list or mapping`;
  }
  return reason;
}

/** yaml's messages end with the position and a source excerpt; the excerpt may hold a secret. */
function stripYamlContext(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

function cleanJsonMessage(message: string): string {
  return message
    // V8 quotes the source around the error, `..."` and `"...` marking where it cut a long
    // one: that excerpt may hold a secret, as yaml's may.
    .replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '')
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/ \(line \d+ column \d+\)$/, '')
    // The one character V8 names (`Unexpected token '\n'` after `tru`) must not break the
    // problem's line: `check` prints one problem a line.
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => CONTROL_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const CONTROL_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function lineCol(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, col: offset - before.lastIndexOf('\n') };
}

function display(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}
