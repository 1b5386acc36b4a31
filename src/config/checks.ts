/**
 * Rules across entries, run on the interpolated document whether or not the
 * schema passed: duplicate ids, references to providers and aliases that do
 * not exist, alias cycles, a redis backend without a URL, an open gateway on a
 * public address, literal secrets.
 */
import { DEFAULTS } from './defaults.js';
import { list, num, obj, str, type Obj } from './doc.js';
import { isListenHost, isLoopbackHost } from './loopback.js';
import { formatPath, problem, type PathSegment } from './path.js';
import { checkProvider } from './provider-checks.js';
import { envName, literalSecret, type SecretContext } from './secrets.js';
import { didYouMean } from './suggest.js';

export type CheckContext = SecretContext;

/**
 * The memory trace store allocates its columns up front: a capacity of a billion
 * passed check and then stopped serve with "Invalid array length". This bound is
 * below where the allocation fails (~330 million) and far above any real use.
 */
export const MAX_MEMORY_TRACES = 100_000_000;

export function crossCheck(doc: unknown, ctx: CheckContext): string[] {
  const root = obj(doc);
  if (root === undefined) return [];
  const out: string[] = [];

  const providers = entries(root.providers, 'providers');
  const providerIds = uniqueIds(providers, 'id', 'provider id', out);
  for (const { value, at } of providers) out.push(...checkProvider(value, at, ctx));

  const models = entries(root.models, 'models');
  const aliases = uniqueIds(models, 'name', 'model name', out);
  for (const { value: m, at } of models) {
    const pool = new Map<string, number>();
    list(m.deployments).forEach((dep, j) => {
      const provider = str(obj(dep)?.provider);
      if (provider === undefined) return;
      const where = [...at, 'deployments', j];
      if (!providerIds.has(provider)) {
        out.push(problem([...where, 'provider'], `unknown provider "${provider}"${didYouMean(provider, providerIds)}`));
      }
      const key = `${provider}/${String(obj(dep)?.model)}`;
      const first = pool.get(key);
      if (first !== undefined) out.push(problem(where, `duplicate deployment ${key} (also deployments[${first}])`));
      else pool.set(key, j);
    });
    for (const field of ['fallbacks', 'contentPolicyFallbacks']) {
      checkAliasList(m[field], [...at, field], { aliases }, out);
    }
    const ceiling = ceilingExcludesAll(m);
    if (ceiling) out.push(problem([...at, 'priceCeiling'], ceiling));
  }
  out.push(...aliasCycles(models));

  const auto = obj(root.auto);
  if (auto) checkAliasList(auto.tiers, ['auto', 'tiers'], { aliases }, out);

  const keys = entries(root.keys, 'keys');
  uniqueIds(keys, 'id', 'key id', out);
  const keyValues = new Map<string, PathSegment[]>();
  for (const { value: k, at } of keys) {
    const secret = literalSecret(k.key, [...at, 'key'], `${envName(k.id)}_KEY`, ctx);
    if (secret) out.push(secret);
    checkAliasList(k.models, [...at, 'models'], { aliases, auto: auto !== undefined, providers: providerIds }, out);
    const v = str(k.key);
    if (v === undefined) continue;
    const first = keyValues.get(v);
    if (first !== undefined) out.push(problem([...at, 'key'], `same key value as ${formatPath(first)}`));
    else keyValues.set(v, [...at, 'key']);
  }

  const server = obj(root.server);
  const admin = literalSecret(server?.adminKey, ['server', 'adminKey'], 'SWITCHYARD_ADMIN_KEY', ctx);
  if (admin) out.push(admin);
  // The admin key opens /traces and /metrics (every key's requests): a client holding the same value could read them.
  const adminValue = str(server?.adminKey);
  const sameAsKey = adminValue === undefined ? undefined : keyValues.get(adminValue);
  if (sameAsKey !== undefined) out.push(problem(['server', 'adminKey'], `same value as ${formatPath(sameAsKey)}: that client could read /traces and /metrics`));
  const host = typeof server?.host === 'string' ? server.host : DEFAULTS.server.host;
  // A malformed host (or one whose ${VAR} failed) is reported as that, not also as public.
  if (list(root.keys).length === 0 && isListenHost(host) && !isLoopbackHost(host)) {
    out.push(noKeysProblem(host));
  }

  const state = obj(root.state);
  if (state?.backend === 'redis' && state.redisUrl === undefined) {
    out.push(problem(['state', 'redisUrl'], 'required when state.backend is redis (or set REDIS_URL)'));
  }

  const traces = obj(root.traces);
  const capacity = num(traces?.capacity);
  if ((traces?.store ?? DEFAULTS.traces.store) === 'memory' && capacity !== undefined && capacity > MAX_MEMORY_TRACES) {
    out.push(problem(['traces', 'capacity'], `at most ${MAX_MEMORY_TRACES} for store memory (use store: sqlite to keep more)`));
  }

  const backoff = obj(obj(root.resilience)?.backoff);
  const baseMs = num(backoff?.baseMs) ?? DEFAULTS.resilience.backoff.baseMs;
  const maxMs = num(backoff?.maxMs) ?? DEFAULTS.resilience.backoff.maxMs;
  if (maxMs < baseMs) out.push(problem(['resilience', 'backoff', 'maxMs'], `must be >= baseMs (${baseMs})`));

  return out;
}

/**
 * A price ceiling that every deployment of an alias without fallbacks is priced
 * above leaves it nothing to serve with: every request would fail, so it is a
 * config error.
 * (Deployments without a price are kept by a ceiling.)
 */
function ceilingExcludesAll(m: Record<string, unknown>): string | undefined {
  const ceiling = obj(m.priceCeiling);
  const maxIn = num(ceiling?.input);
  const maxOut = num(ceiling?.output);
  const deployments = list(m.deployments);
  // With fallbacks the alias still serves, from them (its own pool is skipped).
  if (maxIn === undefined || maxOut === undefined || deployments.length === 0 || list(m.fallbacks).length > 0) return undefined;
  const above = (dep: unknown): boolean => {
    const price = obj(obj(dep)?.price);
    const input = num(price?.input);
    const output = num(price?.output);
    return input !== undefined && output !== undefined && (input > maxIn || output > maxOut);
  };
  return deployments.every(above) ? 'every deployment of this alias is priced above it: the alias could serve nothing' : undefined;
}

export function noKeysProblem(host: string): string {
  return problem(['keys'], `required when server.host (${host}) is not a loopback address: without keys anyone can call the gateway`);
}

interface Entry {
  value: Obj;
  at: PathSegment[];
}

function entries(v: unknown, field: string): Entry[] {
  const out: Entry[] = [];
  list(v).forEach((item, i) => {
    const value = obj(item);
    if (value) out.push({ value, at: [field, i] });
  });
  return out;
}

/** The set of distinct ids; each repeat is a problem naming the first occurrence. */
function uniqueIds(items: Entry[], field: string, what: string, out: string[]): Set<string> {
  const seen = new Map<string, PathSegment[]>();
  for (const { value, at } of items) {
    const id = str(value[field]);
    if (id === undefined) continue;
    const first = seen.get(id);
    if (first) out.push(problem([...at, field], `duplicate ${what} "${id}" (also ${formatPath(first)})`));
    else seen.set(id, at);
  }
  return new Set(seen.keys());
}

interface Known {
  aliases: Set<string>;
  /** `auto` is allowed (keys[].models when auto.tiers is configured). */
  auto?: boolean;
  /** `PROVIDER/MODEL` pins of these providers are allowed (keys[].models). */
  providers?: Set<string>;
}

function checkAliasList(v: unknown, at: PathSegment[], known: Known, out: string[]): void {
  const seen = new Set<string>();
  list(v).forEach((item, j) => {
    const alias = str(item);
    if (alias === undefined) return;
    if (seen.has(alias)) return void out.push(problem([...at, j], `"${alias}" is listed twice`));
    seen.add(alias);
    const slash = alias.indexOf('/');
    if (known.providers && slash > 0) {
      const provider = alias.slice(0, slash);
      if (!known.providers.has(provider)) out.push(problem([...at, j], `unknown provider "${provider}" in "${alias}"`));
    } else if (!known.aliases.has(alias) && !(known.auto && alias === 'auto')) {
      out.push(problem([...at, j], `unknown model alias "${alias}"${didYouMean(alias, known.aliases)}`));
    }
  });
}

/** Each cycle through fallbacks / contentPolicyFallbacks once, as `fast -> smart -> fast`. */
function aliasCycles(models: Entry[]): string[] {
  const index = new Map<string, number>();
  const edges = new Map<string, { to: string; at: PathSegment[] }[]>();
  models.forEach(({ value: m, at }, i) => {
    const name = str(m.name);
    if (name === undefined || index.has(name)) return;
    index.set(name, i);
    const out: { to: string; at: PathSegment[] }[] = [];
    for (const field of ['fallbacks', 'contentPolicyFallbacks']) {
      list(m[field]).forEach((to, j) => {
        if (typeof to === 'string') out.push({ to, at: [...at, field, j] });
      });
    }
    edges.set(name, out);
  });

  const problems: string[] = [];
  const reported = new Set<string>();
  const state = new Map<string, 'active' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): void => {
    state.set(name, 'active');
    stack.push(name);
    for (const { to } of edges.get(name) ?? []) {
      if (!index.has(to)) continue;
      if (state.get(to) === 'active') {
        const cycle = stack.slice(stack.indexOf(to));
        // Start at the alias defined first, so the report does not depend on traversal order.
        const first = cycle.reduce((a, b) => (index.get(b)! < index.get(a)! ? b : a));
        const k = cycle.indexOf(first);
        const rotated = [...cycle.slice(k), ...cycle.slice(0, k)];
        const id = rotated.join('\0');
        if (reported.has(id)) continue;
        reported.add(id);
        const next = rotated[1 % rotated.length];
        const edge = edges.get(first)!.find((e) => e.to === next)!;
        problems.push(problem(edge.at, `alias cycle ${[...rotated, first].join(' -> ')}`));
      } else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const name of index.keys()) if (!state.has(name)) visit(name);
  return problems;
}
