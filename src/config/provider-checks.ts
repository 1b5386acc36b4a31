/**
 * Rules for one provider entry that depend on its `type`: the base URL, the
 * azure-only and simulated-only fields, header syntax, fault scripts, and the
 * API key's origin.
 */
import { list, obj, str, type Obj } from './doc.js';
import { problem, type PathSegment } from './path.js';
import { API_KEY_HEADERS } from './defaults.js';
import { PROVIDER_TYPES } from './schema.js';
import { envName, literalCredentialHeader, literalSecret, type SecretContext } from './secrets.js';
import type { FaultKind, ProviderType } from './types.js';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_HEADER_VALUE = /[\r\n\0]/;
// What the HTTP client (undici) refuses to send: with any of these every request to the
// provider failed, as a network error at request time, from a config that passed check.
const UNSENDABLE_HEADER_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const UNSENDABLE_HEADER_NAMES: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect']);

/** Fault fields and the kinds they belong to. */
const FAULT_FIELD_KINDS: Readonly<Record<string, readonly FaultKind[]>> = {
  status: ['status'],
  retryAfterS: ['rate_limit'],
  afterChunks: ['stream_abort', 'stall'],
  delayMs: ['slow'],
  // The error body's text: no other kind sends a body to put it in.
  message: ['status'],
};
// A `status` fault without a status answers 500 (the simulator's default); a `slow` one without a delay would do nothing.
const FAULT_REQUIRED: Partial<Record<FaultKind, string>> = { slow: 'delayMs' };

export function checkProvider(p: Obj, at: PathSegment[], ctx: SecretContext): string[] {
  const out: string[] = [];
  const type = providerType(p.type);
  const baseUrl = str(p.baseUrl);

  if (type === 'azure' && p.baseUrl === undefined) {
    out.push(problem([...at, 'baseUrl'], 'required for type azure (the resource endpoint https://NAME.openai.azure.com)'));
  }
  if (baseUrl !== undefined && type !== undefined && type !== 'simulated') {
    const why = baseUrlProblem(baseUrl);
    if (why) out.push(problem([...at, 'baseUrl'], why));
  }
  if (p.apiVersion !== undefined && type !== undefined && type !== 'azure') {
    out.push(problem([...at, 'apiVersion'], 'only allowed for type azure'));
  }
  if (p.simulate !== undefined && type !== undefined && type !== 'simulated') {
    out.push(problem([...at, 'simulate'], 'only allowed for type simulated'));
  }

  const keyProblem = literalSecret(p.apiKey, [...at, 'apiKey'], `${envName(p.id)}_API_KEY`, ctx);
  if (keyProblem) out.push(keyProblem);

  const headers = obj(p.headers);
  // An empty ${VAR:-} apiKey is no key (the schema drops it).
  const hasKey = typeof p.apiKey === 'string' && p.apiKey !== '';
  // Header names are case-insensitive: `X-Team` and `x-team` would both be sent, and an upstream keeps either.
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers ?? {})) {
    const first = seen.get(name.toLowerCase());
    if (first === undefined) seen.set(name.toLowerCase(), name);
    if (!HEADER_NAME.test(name)) out.push(problem([...at, 'headers', name], 'not a valid HTTP header name'));
    else if (first !== undefined) out.push(problem([...at, 'headers', name], `the same header as ${first} (names are case-insensitive)`));
    else if (type !== undefined && hasKey && name.toLowerCase() === API_KEY_HEADERS[type]) {
      out.push(problem([...at, 'headers', name], `apiKey is already sent as ${API_KEY_HEADERS[type]} for type ${type}: give one or the other`));
    }
    else if (UNSENDABLE_HEADER_NAMES.has(name.toLowerCase())) {
      out.push(problem([...at, 'headers', name], 'set by the HTTP client itself, it cannot be configured'));
    } else if (typeof value === 'string' && BAD_HEADER_VALUE.test(value)) {
      out.push(problem([...at, 'headers', name], 'must not contain line breaks'));
    } else if (typeof value === 'string' && UNSENDABLE_HEADER_VALUE.test(value)) {
      out.push(problem([...at, 'headers', name], 'must hold only printable characters up to U+00FF (tabs allowed)'));
    } else {
      const secret = literalCredentialHeader(name, value, [...at, 'headers', name], `${envName(p.id)}_API_KEY`, ctx);
      if (secret) out.push(secret);
    }
  }

  list(obj(p.simulate)?.faults).forEach((f, j) => {
    const fault = obj(f);
    if (fault) out.push(...checkFault(fault, [...at, 'simulate', 'faults', j]));
  });
  return out;
}

function checkFault(f: Obj, at: PathSegment[]): string[] {
  const out: string[] = [];
  const kind = typeof f.kind === 'string' ? (f.kind as FaultKind) : undefined;
  if (kind === undefined) return out;
  const required = FAULT_REQUIRED[kind];
  if (required !== undefined && f[required] === undefined) out.push(problem([...at, required], `required for kind ${kind}`));
  for (const [field, owners] of Object.entries(FAULT_FIELD_KINDS)) {
    if (f[field] !== undefined && !owners.includes(kind)) out.push(problem([...at, field], `only for kind ${owners.join(' or ')}`));
  }
  if (typeof f.fromMs === 'number' && typeof f.toMs === 'number' && f.toMs <= f.fromMs) {
    out.push(problem([...at, 'toMs'], 'must be greater than fromMs'));
  }
  return out;
}

function providerType(v: unknown): ProviderType | undefined {
  return (PROVIDER_TYPES as readonly unknown[]).includes(v) ? (v as ProviderType) : undefined;
}

function baseUrlProblem(s: string): string | undefined {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return 'must be an http:// or https:// URL';
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') return 'must be an http:// or https:// URL';
  // The adapters build each request URL from the origin and path alone: user:password@, a
  // ?query and a #fragment were dropped without a word (and a password is a literal secret).
  if (u.username !== '' || u.password !== '') return 'must not hold credentials (user:password@): give the key as apiKey: ${VAR}';
  if (u.search !== '' || u.hash !== '') return 'must not have a ?query or #fragment: the gateway appends the API path to it';
  return undefined;
}
