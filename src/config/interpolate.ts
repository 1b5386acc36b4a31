/**
 * `${VAR}` and `${VAR:-default}` in any string value or map key of a parsed document.
 *
 * Interpolation runs on the parsed tree, not on the file's text, so a value can
 * never inject YAML structure and every problem can name the field it came
 * from. A string that is exactly one `${...}` is re-read as a YAML scalar, so
 * `port: ${PORT:-4000}` is the number 4000 and `${X:-null}` is null; the text is
 * kept too (`reread`) because a field that wants a string (an API key `0123`)
 * must get the characters, not the number. `fromEnv` records which strings were
 * made only of references: secrets must come from the environment, and this is
 * how the checks tell.
 *
 * Like the shell, a default applies when the variable is unset or empty, and a
 * default may itself hold references (`${A:-${B:-x}}`); it cannot hold a `}`.
 * `$${` is a literal `${`; any other `$` is left alone.
 */
import { parse as parseYaml } from 'yaml';
import { formatPath, problem, type PathSegment } from './path.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface Interpolation {
  value: unknown;
  problems: string[];
  /** Paths whose string consisted only of `${...}` references. */
  fromEnv: Set<string>;
  /** Paths whose string held at least one `${...}` reference (`Bearer ${KEY}`). */
  referenced: Set<string>;
  /** Paths re-read from one `${...}` into a number, boolean or null, with the text it replaced. */
  reread: Map<string, string>;
  /** Paths that could not be resolved: any later problem at or under them is noise. */
  failed: Set<string>;
}

interface Ref {
  name: string;
  fallback: Part[] | undefined;
}
type Part = string | Ref;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

export function interpolate(doc: unknown, env: Env): Interpolation {
  const out: Interpolation = {
    value: undefined,
    problems: [],
    fromEnv: new Set(),
    referenced: new Set(),
    reread: new Map(),
    failed: new Set(),
  };
  out.value = walk(doc, [], env, out, new Set());
  return out;
}

/**
 * No field of a config lies deeper than a handful of levels; a document nested
 * thousands deep (JSON.parse takes any depth) would overflow the stack here or in
 * the schema, so it is cut off, named, at this depth.
 */
export const MAX_DEPTH = 32;

function walk(node: unknown, path: PathSegment[], env: Env, out: Interpolation, ancestors: Set<object>): unknown {
  if (typeof node === 'string') return expandValue(node, path, env, out);
  if (node === null || typeof node !== 'object') return node;
  if (path.length >= MAX_DEPTH) {
    out.problems.push(problem(path, `nested more than ${MAX_DEPTH} levels deep`));
    out.failed.add(formatPath(path));
    return undefined;
  }
  if (ancestors.has(node)) {
    out.problems.push(problem(path, 'circular reference'));
    out.failed.add(formatPath(path));
    return undefined;
  }
  ancestors.add(node);
  try {
    if (Array.isArray(node)) return node.map((v, i) => walk(v, [...path, i], env, out, ancestors));
    if (!isPlainObject(node)) return node;
    const entries: [string, unknown][] = [];
    const seen = new Set<string>();
    for (const [raw, v] of Object.entries(node)) {
      const k = expandKey(raw, [...path, raw], env, out);
      if (seen.has(k)) {
        out.problems.push(problem([...path, raw], `names the same key as another after interpolation ('${k}')`));
        out.failed.add(formatPath([...path, raw]));
        continue;
      }
      seen.add(k);
      entries.push([k, walk(v, [...path, k], env, out, ancestors)]);
    }
    // fromEntries defines properties, so a `__proto__` key stays a plain key.
    return Object.fromEntries(entries);
  } finally {
    ancestors.delete(node);
  }
}

/**
 * A map key with `${...}` (a provider's header name from the environment): replaced as a
 * value is, but always text — a key is never re-read as a number or null. Problems name
 * the key as written.
 */
function expandKey(key: string, path: PathSegment[], env: Env, out: Interpolation): string {
  if (!key.includes('${')) return key;
  return expanded(key, formatPath(path), env, out)?.value ?? key;
}

function expandValue(text: string, path: PathSegment[], env: Env, out: Interpolation): unknown {
  if (!text.includes('${')) return text;
  const at = formatPath(path);
  const done = expanded(text, at, env, out);
  if (done === undefined) return text;
  const { parts, value } = done;
  if (parts.some((p) => typeof p !== 'string')) out.referenced.add(at);
  if (parts.length > 0 && parts.every((p) => typeof p !== 'string')) out.fromEnv.add(at);
  if (parts.length === 1 && typeof parts[0] !== 'string' && value !== '') {
    const scalar = rereadScalar(value);
    if (scalar !== undefined) {
      out.reread.set(at, value);
      return scalar.value;
    }
  }
  return value;
}

/** `text` with its references replaced, and its parts; undefined (the problem noted at `at`) when malformed or a variable is unset. */
function expanded(text: string, at: string, env: Env, out: Interpolation): { parts: Part[]; value: string } | undefined {
  const parsed = parseParts(text, 0, false);
  if (parsed === undefined) {
    out.problems.push(`${at}: malformed variable reference (write \${NAME} or \${NAME:-default})`);
    out.failed.add(at);
    return undefined;
  }
  const missing: string[] = [];
  const value = evaluate(parsed.parts, env, missing);
  if (missing.length > 0) {
    for (const name of new Set(missing)) out.problems.push(`${at}: environment variable ${name} is not set`);
    out.failed.add(at);
    return undefined;
  }
  return { parts: parsed.parts, value };
}

/** Parses up to the end (or, nested, up to the `}` closing a default). Undefined when malformed. */
function parseParts(src: string, start: number, nested: boolean): { parts: Part[]; end: number } | undefined {
  const parts: Part[] = [];
  let text = '';
  let i = start;
  const flush = () => {
    if (text !== '') parts.push(text);
    text = '';
  };
  while (i < src.length) {
    const c = src[i];
    if (nested && c === '}') {
      flush();
      return { parts, end: i };
    }
    if (c === '$' && src.startsWith('$${', i)) {
      text += '${';
      i += 3;
      continue;
    }
    if (c === '$' && src[i + 1] === '{') {
      const name = NAME.exec(src.slice(i + 2, i + 2 + 256))?.[0];
      if (name === undefined) return undefined;
      const j = i + 2 + name.length;
      if (src[j] === '}') {
        flush();
        parts.push({ name, fallback: undefined });
        i = j + 1;
        continue;
      }
      if (!src.startsWith(':-', j)) return undefined;
      const inner = parseParts(src, j + 2, true);
      if (inner === undefined) return undefined;
      flush();
      parts.push({ name, fallback: inner.parts });
      i = inner.end + 1;
      continue;
    }
    text += c;
    i++;
  }
  if (nested) return undefined; // a default never closed
  flush();
  return { parts, end: i };
}

function evaluate(parts: Part[], env: Env, missing: string[]): string {
  let s = '';
  for (const p of parts) {
    if (typeof p === 'string') {
      s += p;
      continue;
    }
    const v = env[p.name];
    if (v !== undefined && v !== '') s += v;
    else if (p.fallback !== undefined) s += evaluate(p.fallback, env, missing);
    else if (v === undefined) missing.push(p.name);
  }
  return s;
}

/** A number, boolean or null when `text` reads as one in YAML; otherwise undefined (keep the text). */
function rereadScalar(text: string): { value: number | boolean | null } | undefined {
  let v: unknown;
  try {
    v = parseYaml(text, { logLevel: 'silent' });
  } catch {
    return undefined;
  }
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return { value: v };
  return undefined;
}

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
