/**
 * Document → Config, in one pass that collects every problem:
 *
 *   interpolate ${VAR} → environment and CLI overrides → schema → cross-checks
 *   → per-type defaults → deep freeze
 *
 * The cross-checks run even when the schema fails, so a user fixing a file sees
 * the whole list at once rather than one layer at a time.
 */
import { noKeysProblem, crossCheck } from './checks.js';
import { DEFAULT_AZURE_API_VERSION, DEFAULT_BASE_URLS, DEFAULT_LOCALITY, DEFAULTS } from './defaults.js';
import { list, obj, setIn, type Obj } from './doc.js';
import { ConfigError } from './errors.js';
import { interpolate, type Env, type Interpolation } from './interpolate.js';
import { formatIssues } from './issues.js';
import { isLoopbackHost, unbracket } from './loopback.js';
import { applyCliOverrides, applyEnvOverrides, cliOverrideProblems, type CliOverrides } from './overrides.js';
import { formatPath } from './path.js';
import { ConfigSchema, type ConfigDocument } from './schema.js';
import type { Config, FaultRule, Locality, ProviderConfig, ProviderType } from './types.js';

export interface ParseOptions {
  /** `--port` / `--host`: beat the environment and the file. */
  overrides?: CliOverrides;
  /**
   * Accept secrets written as literals. For documents built in code (where the
   * value came from the caller, not from a file); never for files.
   */
  allowLiteralSecrets?: boolean;
  /** Where the document came from, named in the error. */
  source?: string;
}

/** Configs this module produced: already valid, frozen, and returned as they are. */
const produced = new WeakSet<object>();

export function isParsedConfig(v: unknown): v is Config {
  return typeof v === 'object' && v !== null && produced.has(v);
}

/**
 * Validates a parsed YAML/JSON document (or returns an already-parsed Config as
 * is) and returns the frozen Config. Throws ConfigError listing every problem.
 */
export function parseConfig(doc: unknown, env: Env = process.env, options: ParseOptions = {}): Config {
  if (isParsedConfig(doc)) return options.overrides ? applyOverrides(doc, options.overrides) : doc;

  const interpolated = interpolate(doc, env);
  const raw = interpolated.value;
  dropBlankSecrets(raw, interpolated.reread);

  const found: string[] = [];
  found.push(...applyEnvOverrides(raw, env, options.overrides));
  found.push(...applyCliOverrides(raw, options.overrides));
  const { data, problems: schemaProblems } = validate(raw, interpolated);
  found.push(...schemaProblems);
  found.push(...crossCheck(raw, { fromEnv: interpolated.fromEnv, referenced: interpolated.referenced, allowLiteralSecrets: options.allowLiteralSecrets ?? false }));

  // A field whose ${VAR} failed is reported once, as that; whatever else it trips is noise.
  const failed = [...interpolated.failed];
  const problems = [
    ...interpolated.problems,
    ...found.filter((p) => !failed.some((f) => p.startsWith(`${f}:`) || p.startsWith(`${f}.`) || p.startsWith(`${f}[`))),
  ];
  if (problems.length > 0 || data === undefined) throw new ConfigError([...new Set(problems)], options.source);
  return seal(finalize(data));
}

/**
 * Applies `--port` / `--host` to a loaded Config (for a CLI that parses its flags
 * after loading), re-checking that a public host has client keys.
 */
export function applyOverrides(config: Config, overrides: CliOverrides): Config {
  const problems = cliOverrideProblems(overrides);
  const server = { ...config.server };
  if (overrides.port !== undefined) server.port = overrides.port;
  if (overrides.host !== undefined) server.host = unbracket(overrides.host.trim());
  if (problems.length === 0 && config.keys.length === 0 && !isLoopbackHost(server.host)) {
    problems.push(noKeysProblem(server.host));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return seal({ ...config, server });
}

/**
 * An empty interpolated secret (`${OPENAI_API_KEY:-}`) means "none", and so does a
 * null one (`${ADMIN_KEY:-null}`): it must not become the text "null", a key anyone
 * could guess. A client key that is none is then reported as missing.
 */
function dropBlankSecrets(raw: unknown, reread: Map<string, string>): void {
  const drop = (o: Obj | undefined, field: string, at: string, ifEmpty: boolean) => {
    if (o === undefined || !(o[field] === null || (ifEmpty && o[field] === ''))) return;
    delete o[field];
    reread.delete(at); // else the schema's "expected a string" would bring the text "null" back
  };
  list(obj(raw)?.providers).forEach((p, i) => drop(obj(p), 'apiKey', `providers[${i}].apiKey`, true));
  list(obj(raw)?.keys).forEach((k, i) => drop(obj(k), 'key', `keys[${i}].key`, false));
  drop(obj(obj(raw)?.server), 'adminKey', 'server.adminKey', true);
}

function validate(raw: unknown, interpolated: Interpolation): { data?: ConfigDocument; problems: string[] } {
  let result = ConfigSchema.safeParse(raw);
  if (result.success) return { data: result.data, problems: [] };
  // A `${VAR}` re-read as a number (key "0123" → 123) where a string is wanted: use the text.
  let patched = false;
  for (const issue of result.error.issues) {
    if (issue.code !== 'invalid_type' || issue.expected !== 'string') continue;
    const path = issue.path.map((s) => (typeof s === 'number' ? s : String(s)));
    const text = interpolated.reread.get(formatPath(path));
    if (text === undefined) continue;
    setIn(raw, path, text);
    patched = true;
  }
  if (patched) result = ConfigSchema.safeParse(raw);
  if (result.success) return { data: result.data, problems: [] };
  return { problems: formatIssues(result.error.issues, raw, ConfigSchema) };
}

/** Defaults that depend on another field: per-type base URL and locality, the key's data class. */
function finalize(d: ConfigDocument): Config {
  return {
    ...d,
    providers: d.providers.map((p): ProviderConfig => {
      const out: ProviderConfig = {
        ...p,
        baseUrl: (p.baseUrl ?? DEFAULT_BASE_URLS[p.type] ?? '').replace(/\/+$/, ''),
        locality: p.locality ?? defaultLocality(p.type, p.baseUrl ?? DEFAULT_BASE_URLS[p.type]),
      };
      if (p.type === 'azure') out.apiVersion = p.apiVersion ?? DEFAULT_AZURE_API_VERSION;
      if (p.simulate) out.simulate = { ...p.simulate, faults: p.simulate.faults.map(faultDefaults) };
      return out;
    }),
    keys: d.keys.map((k) => ({ ...k, dataClass: k.dataClass ?? d.privacy.defaultDataClass })),
  };
}

/**
 * A type that runs on this machine (ollama) is local by default only where its baseUrl
 * says so: the same type also reaches ollama.com's API or a shared Ollama elsewhere, and
 * local by type alone sent confidential and restricted data there. The address is judged
 * as written, never resolved (`localhost.example.com` is no loopback; neither is 0.0.0.0):
 * anywhere else `locality: local` in the config says it is the operator's own.
 * `simulated` never leaves the process.
 */
function defaultLocality(type: ProviderType, baseUrl: string | undefined): Locality {
  const byType = DEFAULT_LOCALITY[type];
  if (byType !== 'local' || type === 'simulated') return byType;
  let host: string;
  try {
    host = new URL(baseUrl ?? '').hostname;
  } catch {
    return 'external';
  }
  return isLoopbackHost(host) ? 'local' : 'external';
}

function faultDefaults(f: FaultRule): FaultRule {
  return (f.kind === 'stream_abort' || f.kind === 'stall') && f.afterChunks === undefined
    ? { ...f, afterChunks: DEFAULTS.simulate.streamAbortAfterChunks }
    : f;
}

function seal(config: Config): Config {
  deepFreeze(config);
  produced.add(config);
  return config;
}

function deepFreeze(v: unknown): void {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const child of Object.values(v)) deepFreeze(child);
}
