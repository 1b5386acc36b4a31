/**
 * zod issues → `path: reason` lines a user can act on. zod's own messages
 * ("Invalid input: expected number, received string") are written for
 * developers; these name the field, say what it must be, and never quote a
 * string value (it may be a secret).
 */
import type * as z from 'zod';
import { problem, type PathSegment } from './path.js';
import { didYouMean } from './suggest.js';

type Issue = z.core.$ZodIssue;

export function formatIssues(issues: readonly Issue[], input: unknown, schema: z.ZodType): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    const path = issue.path.map((s): PathSegment => (typeof s === 'number' ? s : String(s)));
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeys(schema, path);
      for (const key of issue.keys) out.push(problem([...path, key], `unknown field${didYouMean(key, known)}`));
      continue;
    }
    out.push(problem(path, reason(issue, valueAt(input, path), isSecretPath(path))));
  }
  return out;
}

/**
 * Fields that hold a secret (secrets.ts): a literal there of the wrong type, a
 * number such as `apiKey: 4242424242`, is still the secret, so not even a number is shown.
 */
function isSecretPath(path: readonly PathSegment[]): boolean {
  const [a, i, b, c] = path;
  if (typeof i !== 'number') return a === 'server' && i === 'adminKey' && path.length === 2;
  if (a === 'providers') return (b === 'apiKey' && path.length === 3) || (b === 'headers' && c !== undefined && path.length === 4);
  return a === 'keys' && b === 'key' && path.length === 3;
}

function reason(issue: Issue, value: unknown, secret = false): string {
  switch (issue.code) {
    case 'invalid_type':
      if (value === undefined) return 'required';
      return `expected ${issue.expected === 'int' ? 'integer' : issue.expected}, got ${secret ? typeOf(value) : describe(value)}`;
    case 'too_small': {
      const n = Number(issue.minimum);
      if (issue.origin === 'string') return n === 1 ? 'must not be empty' : `must be at least ${n} characters`;
      if (issue.origin === 'array') return `must have at least ${n} ${n === 1 ? 'entry' : 'entries'}`;
      return `must be ${issue.inclusive ? '>=' : '>'} ${n}`;
    }
    case 'too_big': {
      const n = Number(issue.maximum);
      if (issue.origin === 'string') return `must be at most ${n} characters`;
      if (issue.origin === 'array') return `must have at most ${n} entries`;
      return `must be ${issue.inclusive ? '<=' : '<'} ${n}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${String(issue.values[0])}`
        : `must be one of: ${issue.values.map(String).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'url' ? 'must be a valid URL' : `must be a valid ${issue.format}`;
    default:
      return issue.message;
  }
}

/** The type of a bad value; numbers and booleans are shown, strings never are. */
function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'object') return 'an object';
  return typeof v === 'string' ? 'a string' : typeof v;
}

/** The type of a bad value, never the value. */
function typeOf(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return `a ${typeof v}`;
  return describe(v);
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let v = root;
  for (const s of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PathSegment, unknown>)[s];
  }
  return v;
}

interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  valueType?: z.ZodType;
}

/** The field names the schema allows at `path`, for "did you mean". */
function knownKeys(schema: z.ZodType, path: readonly PathSegment[]): string[] {
  let s: z.ZodType | undefined = schema;
  let i = 0;
  while (s !== undefined) {
    const def = s._zod.def as unknown as SchemaDef;
    if (def.innerType) s = def.innerType; // optional, nullable, default, prefault
    else if (def.type === 'pipe') s = def.in;
    else if (i === path.length) return def.shape ? Object.keys(def.shape) : [];
    else if (def.type === 'object') s = def.shape?.[String(path[i++])];
    else if (def.type === 'array' || def.type === 'record') {
      s = def.type === 'array' ? def.element : def.valueType;
      i++;
    } else return [];
  }
  return [];
}
