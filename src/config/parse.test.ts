import { describe, expect, it } from 'vitest';
import { DEFAULTS } from './defaults.js';
import { ConfigError } from './errors.js';
import { configProblems } from '../../test/helpers/config-problems.js';
import { applyOverrides, isParsedConfig, parseConfig } from './parse.js';
import type { Config } from './types.js';

// Fixtures are untyped documents that the cases edit freely.
type Doc = Record<string, any>;

/** A small valid document: two providers, two aliases, `fast` falls back to `smart`. */
function base(): Doc {
  return {
    providers: [
      { id: 'openai', type: 'openai', apiKey: '${OPENAI_API_KEY}' },
      { id: 'sim', type: 'simulated' },
    ],
    models: [
      { name: 'fast', deployments: [{ provider: 'openai', model: 'gpt-4o-mini' }], fallbacks: ['smart'] },
      { name: 'smart', deployments: [{ provider: 'sim', model: 'big' }] },
    ],
  };
}
const ENV = { OPENAI_API_KEY: 'sk-test-123' };

const problemsOf = (doc: unknown, env: Record<string, string> = ENV) => configProblems(() => parseConfig(doc, env));

describe('parseConfig: every contract error is one exact `path: reason` line', () => {
  const cases: { name: string; edit: (d: Doc) => void; env?: Record<string, string>; expected: string }[] = [
    {
      name: 'unknown field',
      edit: (d) => (d.server = { prot: 8080 }),
      expected: 'server.prot: unknown field (did you mean "port"?)',
    },
    {
      name: 'unknown field deep in a list',
      edit: (d) => (d.models[0].deployments[0].wieght = 2),
      expected: 'models[0].deployments[0].wieght: unknown field (did you mean "weight"?)',
    },
    {
      name: 'a deadline on a deployment (it bounds the whole request)',
      edit: (d) => (d.models[0].deployments[0].deadlineMs = 5000),
      expected: 'models[0].deployments[0].deadlineMs: the deadline bounds the whole request, every candidate included: set resilience.deadlineMs (one attempt on this deployment: requestTimeoutMs)',
    },
    {
      name: 'unknown top-level field',
      edit: (d) => (d.telemetry = {}),
      expected: 'telemetry: unknown field',
    },
    {
      name: 'unknown provider id',
      edit: (d) => (d.models[1].deployments[0].provider = 'simulatd'),
      expected: 'models[1].deployments[0].provider: unknown provider "simulatd"',
    },
    {
      name: 'alias cycle',
      edit: (d) => (d.models[1].fallbacks = ['fast']),
      expected: 'models[0].fallbacks[0]: alias cycle fast -> smart -> fast',
    },
    {
      name: 'alias cycle through contentPolicyFallbacks, reported from the first-defined alias',
      edit: (d) => (d.models[1].contentPolicyFallbacks = ['fast']),
      expected: 'models[0].fallbacks[0]: alias cycle fast -> smart -> fast',
    },
    {
      name: 'a price ceiling above which every deployment of the alias is priced',
      edit: (d) => {
        d.models[0].priceCeiling = { input: 0.01, output: 0.01 };
        for (const dep of d.models[0].deployments) dep.price = { input: 1, output: 2 };
        d.models[0].fallbacks = [];
      },
      expected: 'models[0].priceCeiling: every deployment of this alias is priced above it: the alias could serve nothing',
    },
    {
      name: 'a price ceiling bounds input and output only: no cachedInput',
      edit: (d) => (d.models[0].priceCeiling = { input: 1, output: 1, cachedInput: 0.1 }),
      expected: 'models[0].priceCeiling.cachedInput: unknown field',
    },
    {
      name: 'a negative cachedInput price',
      edit: (d) => (d.models[0].deployments[0].price = { input: 1, output: 2, cachedInput: -1 }),
      expected: 'models[0].deployments[0].price.cachedInput: must be >= 0',
    },
    {
      name: 'a cacheWrite price that is not a number',
      edit: (d) => (d.models[0].deployments[0].price = { input: 1, output: 2, cacheWrite: '3.75' }),
      expected: 'models[0].deployments[0].price.cacheWrite: expected number, got a string',
    },
    {
      name: 'self fallback',
      edit: (d) => (d.models[1].fallbacks = ['smart']),
      expected: 'models[1].fallbacks[0]: alias cycle smart -> smart',
    },
    {
      name: 'unknown fallback alias',
      edit: (d) => (d.models[0].fallbacks = ['smrt']),
      expected: 'models[0].fallbacks[0]: unknown model alias "smrt" (did you mean "smart"?)',
    },
    {
      name: 'unknown auto tier',
      edit: (d) => (d.auto = { tiers: ['fast', 'frontier'] }),
      expected: 'auto.tiers[1]: unknown model alias "frontier"',
    },
    {
      name: 'duplicate provider id',
      edit: (d) => d.providers.push({ id: 'openai', type: 'ollama' }),
      expected: 'providers[2].id: duplicate provider id "openai" (also providers[0])',
    },
    {
      name: 'duplicate model name',
      edit: (d) => d.models.push({ name: 'fast', deployments: [{ provider: 'sim', model: 'x' }] }),
      expected: 'models[2].name: duplicate model name "fast" (also models[0])',
    },
    {
      name: 'duplicate key id',
      edit: (d) =>
        (d.keys = [
          { id: 'team-a', key: '${KEY_1}' },
          { id: 'team-a', key: '${KEY_2}' },
        ]),
      env: { ...ENV, KEY_1: 'k1', KEY_2: 'k2' },
      expected: 'keys[1].id: duplicate key id "team-a" (also keys[0])',
    },
    {
      name: 'identical key values',
      edit: (d) =>
        (d.keys = [
          { id: 'a', key: '${KEY_1}' },
          { id: 'b', key: '${KEY_2}' },
        ]),
      env: { ...ENV, KEY_1: 'same', KEY_2: 'same' },
      expected: 'keys[1].key: same key value as keys[0].key',
    },
    {
      // Found by the observability audit: that client could read every key's traces.
      name: 'admin key equal to a client key',
      edit: (d) => {
        d.server = { adminKey: '${ADMIN_KEY}' };
        d.keys = [{ id: 'a', key: '${KEY_1}' }];
      },
      env: { ...ENV, KEY_1: 'same-value', ADMIN_KEY: 'same-value' },
      expected: 'server.adminKey: same value as keys[0].key: that client could read /traces and /metrics',
    },
    {
      name: 'redis backend without a URL',
      edit: (d) => (d.state = { backend: 'redis' }),
      expected: 'state.redisUrl: required when state.backend is redis (or set REDIS_URL)',
    },
    {
      name: 'literal apiKey',
      edit: (d) => (d.providers[0].apiKey = 'sk-live-abc'),
      expected: 'providers[0].apiKey: must come from the environment, e.g. ${OPENAI_API_KEY}, not a literal secret',
    },
    {
      name: 'apiKey with literal text around a reference',
      edit: (d) => (d.providers[0].apiKey = 'sk-${OPENAI_API_KEY}'),
      expected: 'providers[0].apiKey: must come from the environment, e.g. ${OPENAI_API_KEY}, not a literal secret',
    },
    {
      name: 'literal client key',
      edit: (d) => (d.keys = [{ id: 'team-a', key: 'hunter2' }]),
      expected: 'keys[0].key: must come from the environment, e.g. ${TEAM_A_KEY}, not a literal secret',
    },
    {
      name: 'literal admin key',
      edit: (d) => (d.server = { adminKey: 'letmein' }),
      expected: 'server.adminKey: must come from the environment, e.g. ${SWITCHYARD_ADMIN_KEY}, not a literal secret',
    },
    {
      name: 'unset ${VAR} (reported once, not also as a literal secret)',
      edit: () => {},
      env: {},
      expected: 'providers[0].apiKey: environment variable OPENAI_API_KEY is not set',
    },
    {
      name: 'unset ${VAR} in a required field (not also "required")',
      edit: (d) => (d.models[0].deployments[0].model = '${FAST_MODEL}'),
      expected: 'models[0].deployments[0].model: environment variable FAST_MODEL is not set',
    },
    {
      name: 'no keys on 0.0.0.0',
      edit: (d) => (d.server = { host: '0.0.0.0' }),
      expected:
        'keys: required when server.host (0.0.0.0) is not a loopback address: without keys anyone can call the gateway',
    },
    { name: 'bad type: string port', edit: (d) => (d.server = { port: 'http' }), expected: 'server.port: expected number, got a string' },
    { name: 'bad type: fractional retries', edit: (d) => (d.resilience = { maxRetries: 1.5 }), expected: 'resilience.maxRetries: expected integer, got 1.5' },
    { name: 'bad type: list for object', edit: (d) => (d.resilience = { backoff: [200] }), expected: 'resilience.backoff: expected object, got a list' },
    { name: 'bad range: weight 0', edit: (d) => (d.models[0].deployments[0].weight = 0), expected: 'models[0].deployments[0].weight: must be > 0' },
    {
      name: 'bad enum: strategy',
      edit: (d) => (d.models[0].strategy = 'fastest'),
      expected: 'models[0].strategy: must be one of: weighted, latency, ttft, throughput, least-busy, usage, cost',
    },
    { name: 'missing required field', edit: (d) => delete d.models[0].deployments[0].model, expected: 'models[0].deployments[0].model: required' },
    { name: 'empty pool', edit: (d) => (d.models[1].deployments = []), expected: 'models[1].deployments: must have at least 1 entry' },
    {
      name: 'model named auto',
      edit: (d) => d.models.push({ name: 'auto', deployments: [{ provider: 'sim', model: 'x' }] }),
      expected: 'models[2].name: "auto" is reserved for auto.tiers',
    },
    {
      name: 'provider id with a slash',
      edit: (d) => d.providers.push({ id: 'a/b', type: 'ollama' }),
      expected: 'providers[2].id: must not contain "/" (it separates PROVIDER/MODEL)',
    },
    {
      name: 'azure without baseUrl',
      edit: (d) => d.providers.push({ id: 'az', type: 'azure' }),
      expected: 'providers[2].baseUrl: required for type azure (the resource endpoint https://NAME.openai.azure.com)',
    },
    { name: 'non-http baseUrl', edit: (d) => (d.providers[0].baseUrl = 'ftp://x'), expected: 'providers[0].baseUrl: must be an http:// or https:// URL' },
    {
      // Dropped without a word when the request URL was built (found by the config fuzz).
      name: 'credentials in a baseUrl',
      edit: (d) => (d.providers[0].baseUrl = 'https://user:pass@proxy.example.com/v1'),
      expected: 'providers[0].baseUrl: must not hold credentials (user:password@): give the key as apiKey: ${VAR}',
    },
    {
      name: 'a query string in a baseUrl',
      edit: (d) => (d.providers[0].baseUrl = 'https://proxy.example.com/v1?key=abc'),
      expected: 'providers[0].baseUrl: must not have a ?query or #fragment: the gateway appends the API path to it',
    },
    {
      name: 'a fragment in a baseUrl',
      edit: (d) => (d.providers[0].baseUrl = 'https://proxy.example.com/v1#eu'),
      expected: 'providers[0].baseUrl: must not have a ?query or #fragment: the gateway appends the API path to it',
    },
    {
      // undici refuses to send it: every request failed over as a network error (found by the config fuzz).
      name: 'a header the HTTP client sets itself',
      edit: (d) => (d.providers[0].headers = { 'Content-Length': '5' }),
      expected: 'providers[0].headers.Content-Length: set by the HTTP client itself, it cannot be configured',
    },
    {
      // The contract's rule for apiKey, for the headers that carry one (found by the config fuzz).
      name: 'a credential written out in a provider header',
      edit: (d) => {
        delete d.providers[0].apiKey; // the header instead
        d.providers[0].headers = { Authorization: 'Bearer sk-live-abc', 'x-team': 'a' };
      },
      expected: 'providers[0].headers.Authorization: holds a credential: it must come from the environment, e.g. "Bearer ${OPENAI_API_KEY}", not a literal secret',
    },
    {
      name: 'an api-key header written out',
      edit: (d) => (d.providers[0].headers = { 'X-Api-Key': 'abc' }),
      expected: 'providers[0].headers.X-Api-Key: holds a credential: it must come from the environment, e.g. "${OPENAI_API_KEY}", not a literal secret',
    },
    {
      name: 'one header twice, in two cases',
      edit: (d) => (d.providers[0].headers = { 'X-Team': 'a', 'x-team': 'b' }),
      expected: 'providers[0].headers.x-team: the same header as X-Team (names are case-insensitive)',
    },
    {
      // Both would be sent, and the upstream would take either (found by review).
      name: 'the key given twice: apiKey and its own header',
      edit: (d) => (d.providers[0].headers = { Authorization: 'Bearer ${OPENAI_API_KEY}' }),
      expected: 'providers[0].headers.Authorization: apiKey is already sent as authorization for type openai: give one or the other',
    },
    {
      name: 'a header value with a control character',
      edit: (d) => (d.providers[0].headers = { 'x-team': 'a\u0001b', 'x-ok': 'tab\there, café' }),
      expected: 'providers[0].headers.x-team: must hold only printable characters up to U+00FF (tabs allowed)',
    },
    {
      // serve allocated it up front and stopped with "Invalid array length" (found by the config fuzz).
      name: 'a memory trace store too large to allocate',
      edit: (d) => (d.traces = { capacity: 1e12 }),
      expected: 'traces.capacity: at most 100000000 for store memory (use store: sqlite to keep more)',
    },
    {
      // Its interval, 1000/tokensPerSecond ms, is a timer: past 2^31-1 ms Node fires it after 1 ms (found by review).
      name: 'a simulator pace too slow for a timer',
      edit: (d) => (d.providers[1].simulate = { tokensPerSecond: 1e-7 }),
      expected: 'providers[1].simulate.tokensPerSecond: must be >= 0.001',
    },
    { name: 'simulate on a real provider', edit: (d) => (d.providers[0].simulate = {}), expected: 'providers[0].simulate: only allowed for type simulated' },
    { name: 'apiVersion off azure', edit: (d) => (d.providers[0].apiVersion = 'v1'), expected: 'providers[0].apiVersion: only allowed for type azure' },
    {
      name: 'fault without its required field',
      edit: (d) => (d.providers[1].simulate = { faults: [{ kind: 'status' }, { kind: 'slow' }] }),
      expected: 'providers[1].simulate.faults[1].delayMs: required for kind slow',
    },
    {
      name: 'fault field of another kind',
      edit: (d) => (d.providers[1].simulate = { faults: [{ kind: 'hang', delayMs: 5 }] }),
      expected: 'providers[1].simulate.faults[0].delayMs: only for kind slow',
    },
    {
      name: 'fault message on a kind that sends no error body',
      edit: (d) => (d.providers[1].simulate = { faults: [{ kind: 'status', message: 'down' }, { kind: 'reset', message: 'gone' }] }),
      expected: 'providers[1].simulate.faults[1].message: only for kind status',
    },
    {
      name: 'fault probability out of range',
      edit: (d) => (d.providers[1].simulate = { faults: [{ kind: 'reset', probability: 1.5 }] }),
      expected: 'providers[1].simulate.faults[0].probability: must be <= 1',
    },
    {
      name: 'backoff max below base',
      edit: (d) => (d.resilience = { backoff: { baseMs: 8000 } }),
      expected: 'resilience.backoff.maxMs: must be >= baseMs (8000)',
    },
    {
      name: 'key allowing an unknown alias',
      edit: (d) => (d.keys = [{ id: 'a', key: '${OPENAI_API_KEY}', models: ['fast', 'auto'] }]),
      expected: 'keys[0].models[1]: unknown model alias "auto"',
    },
    { name: 'bad redis URL', edit: (d) => (d.state = { backend: 'redis', redisUrl: 'http://x' }), expected: 'state.redisUrl: must be a redis:// or rediss:// URL' },
    { name: 'bad env number', edit: () => {}, env: { ...ENV, MAX_RETRIES: 'three' }, expected: 'env.MAX_RETRIES: must be an integer >= 0, got "three"' },
    {
      // Node fires a longer timer after 1 ms: the grace period would cut in-flight requests at once (found by the config fuzz).
      name: 'a timer duration past 2^31-1 ms',
      edit: (d) => (d.server = { shutdownGraceMs: 1e300 }),
      expected: 'server.shutdownGraceMs: must be <= 2147483647',
    },
    {
      name: 'a per-deployment timeout past 2^31-1 ms',
      edit: (d) => (d.models[0].deployments[0].ttftTimeoutMs = 3e9),
      expected: 'models[0].deployments[0].ttftTimeoutMs: must be <= 2147483647',
    },
    {
      name: 'a timer duration from the environment past 2^31-1 ms',
      edit: () => {},
      env: { ...ENV, REQUEST_TIMEOUT_MS: '2147483648' },
      expected: 'env.REQUEST_TIMEOUT_MS: must be an integer from 1 to 2147483647, got "2147483648"',
    },
    { name: 'bad REDIS_URL', edit: () => {}, env: { ...ENV, REDIS_URL: 'localhost:6379' }, expected: 'env.REDIS_URL: must be a redis:// or rediss:// URL' },
    {
      // Named as the variable, like every other bad one: the file's server.host is not at fault.
      name: 'bad HOST',
      edit: () => {},
      env: { ...ENV, HOST: 'http://0.0.0.0:4000' },
      expected: 'env.HOST: must be an IP address or a hostname (no scheme, port or spaces)',
    },
    {
      name: 'HOST=0.0.0.0 without keys',
      edit: () => {},
      env: { ...ENV, HOST: '0.0.0.0' },
      expected:
        'keys: required when server.host (0.0.0.0) is not a loopback address: without keys anyone can call the gateway',
    },
  ];

  it.each(cases)('$name', ({ edit, env, expected }) => {
    const doc = base();
    edit(doc);
    expect(problemsOf(doc, env)).toEqual([expected]);
  });

  it('a price ceiling above every deployment of an alias with fallbacks is no problem: the fallbacks serve (found by review)', () => {
    const doc = base();
    doc.models[0].priceCeiling = { input: 0.01, output: 0.01 };
    for (const dep of doc.models[0].deployments) dep.price = { input: 1, output: 2 };
    doc.models[0].fallbacks = ['smart'];
    expect(problemsOf(doc)).toEqual([]);
  });

  it('the base document itself is valid', () => {
    expect(problemsOf(base())).toEqual([]);
  });

  it('reports schema and cross-check problems together, in one error', () => {
    const doc = base();
    doc.server = { prot: 1, host: '0.0.0.0' };
    doc.models[0].deployments[0].provider = 'nope';
    doc.models[1].fallbacks = ['fast'];
    doc.providers[0].apiKey = 'sk-literal';
    doc.state = { backend: 'redis' };
    let error: unknown;
    try {
      parseConfig(doc, ENV, { source: 'x.yaml' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const e = error as ConfigError;
    expect([...e.problems].sort()).toEqual(
      [
        'server.prot: unknown field (did you mean "port"?)',
        'models[0].deployments[0].provider: unknown provider "nope"',
        'models[0].fallbacks[0]: alias cycle fast -> smart -> fast',
        'providers[0].apiKey: must come from the environment, e.g. ${OPENAI_API_KEY}, not a literal secret',
        'state.redisUrl: required when state.backend is redis (or set REDIS_URL)',
        'keys: required when server.host (0.0.0.0) is not a loopback address: without keys anyone can call the gateway',
      ].sort(),
    );
    expect(e.message).toContain('Invalid configuration in x.yaml (6 problems):\n  ');
    expect(e.message).not.toContain('sk-literal');
  });

  it('never quotes a secret value in a problem', () => {
    const doc = base();
    doc.keys = [
      { id: 'a', key: '${K}' },
      { id: 'b', key: '${K}' },
    ];
    doc.providers[0].apiKey = 12345;
    const problems = problemsOf(doc, { K: 'super-secret-value' });
    // A number where a secret belongs is that secret written out: its type only, not the digits.
    expect(problems).toEqual(['providers[0].apiKey: expected string, got a number', 'keys[1].key: same key value as keys[0].key']);
    expect(problems.join('\n')).not.toContain('super-secret-value');
  });

  it('never quotes a number or boolean written in any secret field', () => {
    const doc = base();
    doc.server = { adminKey: 987654321 };
    doc.providers[1].headers = { authorization: 55555, 'x-tenant': 7 };
    doc.keys = [{ id: 'a', key: 4242424242 }, { id: 'b', key: true }];
    const problems = problemsOf(doc);
    expect(problems).toEqual([
      'server.adminKey: expected string, got a number',
      'providers[1].headers.authorization: expected string, got a number',
      'providers[1].headers.x-tenant: expected string, got a number',
      'keys[0].key: expected string, got a number',
      'keys[1].key: expected string, got a boolean',
    ]);
    // Elsewhere a number is shown: it says what was wrong with it.
    expect(problemsOf({ ...base(), server: { shutdownGraceMs: 1.5 } })).toEqual(['server.shutdownGraceMs: expected integer, got 1.5']);
  });
});

describe('parseConfig: defaults', () => {
  it('fills every documented default', () => {
    const config = parseConfig(base(), ENV);
    expect(config.server).toEqual(DEFAULTS.server);
    expect(config.server).toEqual({ host: '127.0.0.1', port: 4000, maxBodyBytes: 4194304, shutdownGraceMs: 10000, cors: { origins: [] } });
    expect(config.resilience).toEqual({
      requestTimeoutMs: 30000,
      deadlineMs: 120000,
      ttftTimeoutMs: 20000,
      idleTimeoutMs: 15000,
      streamResume: true,
      maxRetries: 2,
      backoff: { baseMs: 200, maxMs: 5000 },
      breaker: { failureThreshold: 5, recoveryMs: 30000, halfOpenProbes: 1, windowMs: 60000, failureRate: 0.5, minRequests: 20 },
      cooldownMs: 60000,
      throttleMaxWaitMs: 2000,
      maxRetryAfterWaitMs: 5000,
    });
    expect(config.limits).toEqual({ defaultRpm: null });
    expect(config.state).toEqual({ backend: 'memory', keyPrefix: 'switchyard:' });
    expect(config.traces).toEqual({ store: 'memory', capacity: 10000, path: './data/traces.db', maxAgeMs: 604800000 });
    expect(config.privacy).toEqual({ defaultDataClass: 'internal' });
    expect(config.keys).toEqual([]);
    expect(config.auto).toBeUndefined();
    expect(config.providers[0]).toEqual({
      id: 'openai',
      type: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-test-123',
      locality: 'external',
      headers: {},
      maxConnections: 64,
    });
    expect(config.models[0]).toEqual({
      name: 'fast',
      strategy: 'weighted',
      deployments: [{ provider: 'openai', model: 'gpt-4o-mini', weight: 1, capabilities: [] }],
      fallbacks: ['smart'],
      contentPolicyFallbacks: [],
    });
  });

  it('merges a partial section over its defaults', () => {
    const doc = base();
    doc.resilience = { backoff: { baseMs: 50 }, breaker: { failureThreshold: 3 } };
    const r = parseConfig(doc, ENV).resilience;
    expect(r.backoff).toEqual({ baseMs: 50, maxMs: 5000 });
    expect(r.breaker.failureThreshold).toBe(3);
    expect(r.breaker.recoveryMs).toBe(30000);
    expect(r.maxRetries).toBe(2);
  });

  // Regression (was a bug): ollama was local by its type alone, wherever baseUrl pointed, so
  // confidential and restricted requests went to ollama.com's API or anyone's Ollama.
  it('an ollama provider is local by default only at a loopback address as written', () => {
    const at = (baseUrl: string, locality?: string) => {
      const doc = base();
      doc.providers = [{ id: 'l', type: 'ollama', baseUrl, ...(locality ? { locality } : {}) }];
      doc.models = [];
      return parseConfig(doc, {}).providers[0]!.locality;
    };
    for (const url of ['http://127.0.0.1:11434', 'http://127.1:11434', 'http://localhost:11434', 'http://LOCALHOST:11434', 'http://[::1]:11434', 'http://[::ffff:127.0.0.1]:11434']) {
      expect([url, at(url)]).toEqual([url, 'local']);
    }
    // No name is resolved: a name or an address that is not loopback as written is external until the config says local.
    for (const url of ['https://ollama.com', 'http://localhost.example.com:11434', 'http://gpu-box:11434', 'http://10.0.0.7:11434', 'http://0.0.0.0:11434', 'http://[::]:11434', 'http://localhost.:11434']) {
      expect([url, at(url)]).toEqual([url, 'external']);
      expect(at(url, 'local')).toBe('local');
    }
    expect(at('http://127.0.0.1:11434', 'external')).toBe('external');
  });

  it('defaults base URL, locality and apiVersion per provider type', () => {
    const doc = base();
    doc.providers = [
      { id: 'o', type: 'openai' },
      { id: 'a', type: 'anthropic' },
      { id: 'g', type: 'gemini' },
      { id: 'c', type: 'cohere' },
      { id: 'l', type: 'ollama' },
      { id: 's', type: 'simulated' },
      { id: 'z', type: 'azure', baseUrl: 'https://res.openai.azure.com/' },
      { id: 'v', type: 'openai', baseUrl: 'http://127.0.0.1:8000/v1', locality: 'local' },
    ];
    doc.models = [];
    const ps = parseConfig(doc, {}).providers;
    expect(ps.map((p) => [p.id, p.baseUrl, p.locality])).toEqual([
      ['o', 'https://api.openai.com/v1', 'external'],
      ['a', 'https://api.anthropic.com', 'external'],
      ['g', 'https://generativelanguage.googleapis.com', 'external'],
      ['c', 'https://api.cohere.com', 'external'],
      ['l', 'http://127.0.0.1:11434', 'local'],
      ['s', 'simulated://local', 'local'],
      ['z', 'https://res.openai.azure.com', 'external'],
      ['v', 'http://127.0.0.1:8000/v1', 'local'],
    ]);
    expect(ps[6].apiVersion).toBe('2024-10-21');
    expect(ps[0].apiVersion).toBeUndefined();
    expect(ps.every((p) => p.apiKey === undefined)).toBe(true);
  });

  it('fills the simulate block and each fault', () => {
    const doc = base();
    doc.providers[1].simulate = { rpmLimit: 10, faults: [{ kind: 'rate_limit', retryAfterS: 2, fromMs: 0, toMs: 1000 }, { kind: 'stream_abort' }] };
    const sim = parseConfig(doc, ENV).providers[1].simulate;
    expect(sim).toEqual({
      latencyMs: 50,
      ttftMs: 30,
      tokensPerSecond: 200,
      rpmLimit: 10,
      faults: [
        { kind: 'rate_limit', probability: 1, retryAfterS: 2, fromMs: 0, toMs: 1000 },
        { kind: 'stream_abort', probability: 1, afterChunks: 1 },
      ],
    });
  });

  it("gives a key privacy.defaultDataClass unless it sets its own", () => {
    const doc = base();
    doc.privacy = { defaultDataClass: 'confidential' };
    doc.keys = [
      { id: 'a', key: '${KA}' },
      { id: 'b', key: '${KB}', dataClass: 'public', allowExternal: false, models: ['fast', 'sim/big'] },
    ];
    const keys = parseConfig(doc, { ...ENV, KA: 'ka', KB: 'kb' }).keys;
    expect(keys).toEqual([
      { id: 'a', key: 'ka', dataClass: 'confidential', allowExternal: true },
      { id: 'b', key: 'kb', dataClass: 'public', allowExternal: false, models: ['fast', 'sim/big'] },
    ]);
  });
});

describe('parseConfig: interpolated values', () => {
  it('turns a lone ${...} into the scalar the field wants', () => {
    const doc = base();
    doc.server = { port: '${PORT_X:-4100}', host: '${BIND:-127.0.0.2}' };
    doc.limits = { defaultRpm: '${RPM:-null}' };
    doc.resilience = { streamResume: '${RESUME:-false}' };
    const c = parseConfig(doc, ENV);
    expect(c.server.port).toBe(4100);
    expect(c.server.host).toBe('127.0.0.2');
    expect(c.limits.defaultRpm).toBeNull();
    expect(c.resilience.streamResume).toBe(false);
  });

  it('keeps the exact text where a string is wanted (a numeric-looking key keeps its leading zero)', () => {
    const doc = base();
    doc.keys = [{ id: 'a', key: '${KA}' }];
    doc.models[0].deployments[0].model = '${M}';
    const c = parseConfig(doc, { ...ENV, KA: '000123', M: '1e3' });
    expect(c.keys[0].key).toBe('000123');
    expect(c.models[0].deployments[0].model).toBe('1e3');
  });

  it('never turns a secret set to null into the text "null", a key anyone could guess (found by the config fuzz)', () => {
    const doc = base();
    doc.providers[0].apiKey = '${OPENAI_API_KEY:-null}';
    doc.server = { adminKey: '${ADMIN:-null}' };
    const c = parseConfig(doc, {});
    expect('apiKey' in c.providers[0]).toBe(false);
    expect('adminKey' in c.server).toBe(false);
    // A client key that is none is missing, not "null".
    doc.keys = [{ id: 'team', key: '${TEAM_KEY:-null}' }];
    expect(problemsOf(doc, {})).toEqual(['keys[0].key: required']);
    // A variable that holds the word is still taken as written.
    doc.keys = [{ id: 'team', key: '${TEAM_KEY}' }];
    expect(parseConfig(doc, { TEAM_KEY: 'null-but-long-enough' }).keys[0].key).toBe('null-but-long-enough');
  });

  it('treats an empty interpolated apiKey or adminKey as absent', () => {
    const doc = base();
    doc.providers[0].apiKey = '${OPENAI_API_KEY:-}';
    doc.server = { adminKey: '${ADMIN}' };
    const c = parseConfig(doc, { ADMIN: '' });
    expect('apiKey' in c.providers[0]).toBe(false);
    expect('adminKey' in c.server).toBe(false);
  });

  it('takes a credential header from the environment, whole or as part of its value', () => {
    const doc = base();
    delete doc.providers[0].apiKey; // the header instead
    doc.providers[0].headers = { authorization: 'Bearer ${PROXY_KEY}', 'x-api-key': '${PROXY_KEY}', 'x-team': 'plain' };
    const c = parseConfig(doc, { ...ENV, PROXY_KEY: 'pk-1' });
    expect(c.providers[0].headers).toEqual({ authorization: 'Bearer pk-1', 'x-api-key': 'pk-1', 'x-team': 'plain' });
    // A `$${` is a literal `${`, no reference: still a literal secret.
    doc.providers[0].headers = { authorization: 'Bearer $${PROXY_KEY}' };
    expect(problemsOf(doc)).toEqual([expect.stringMatching(/^providers\[0\]\.headers\.authorization: holds a credential/)]);
  });

  it('accepts literal secrets only when asked (documents built in code)', () => {
    const doc = base();
    doc.providers[0].apiKey = 'sk-from-code';
    doc.providers[0].headers = { 'proxy-authorization': 'Bearer from-code' };
    const c = parseConfig(doc, {}, { allowLiteralSecrets: true });
    expect(c.providers[0].apiKey).toBe('sk-from-code');
    expect(c.providers[0].headers['proxy-authorization']).toBe('Bearer from-code');
  });
});

describe('parseConfig: overrides', () => {
  it('applies the environment over the file', () => {
    const doc = base();
    doc.server = { port: 5000, host: '127.0.0.1' };
    doc.resilience = { requestTimeoutMs: 1000, maxRetries: 5 };
    const c = parseConfig(doc, {
      ...ENV,
      REQUEST_TIMEOUT_MS: '2500',
      MAX_RETRIES: '0',
      THROTTLE_MAX_WAIT_MS: '10',
      DEFAULT_RPM: '600',
      REDIS_URL: 'redis://cache:6379/2',
      PORT: '4321',
      HOST: '::1',
    });
    expect(c.resilience.requestTimeoutMs).toBe(2500);
    expect(c.resilience.maxRetries).toBe(0);
    expect(c.resilience.throttleMaxWaitMs).toBe(10);
    expect(c.limits.defaultRpm).toBe(600);
    expect(c.state).toEqual({ backend: 'redis', redisUrl: 'redis://cache:6379/2', keyPrefix: 'switchyard:' });
    expect(c.server.port).toBe(4321);
    expect(c.server.host).toBe('::1');
  });

  it('ignores empty variables', () => {
    const c = parseConfig(base(), { ...ENV, PORT: '', MAX_RETRIES: ' ', REDIS_URL: '' });
    expect(c.server.port).toBe(4000);
    expect(c.resilience.maxRetries).toBe(2);
    expect(c.state.backend).toBe('memory');
  });

  it('lets CLI flags beat PORT and HOST', () => {
    const doc = base();
    doc.keys = [{ id: 'a', key: '${OPENAI_API_KEY}' }];
    const c = parseConfig(doc, { ...ENV, PORT: '4321', HOST: '127.0.0.5' }, { overrides: { port: 0, host: '0.0.0.0' } });
    expect(c.server.port).toBe(0);
    expect(c.server.host).toBe('0.0.0.0');
  });

  it('does not read PORT or HOST when a flag beats it: a bad value there cannot stop the gateway (found by the contract audit)', () => {
    const c = parseConfig(base(), { ...ENV, PORT: 'abc', HOST: 'bad host' }, { overrides: { port: 38_000, host: '127.0.0.2' } });
    expect(c.server).toMatchObject({ port: 38_000, host: '127.0.0.2' });
    // Without the flag the variable is read, and a bad one is still a problem.
    expect(problemsOf(base(), { ...ENV, HOST: 'bad host' })).toEqual([expect.stringMatching(/^env\.HOST: /)]);
  });

  it('refuses a bad PORT with the variable named', () => {
    expect(problemsOf(base(), { ...ENV, PORT: '70000' })).toEqual(['env.PORT: must be an integer from 0 to 65535, got "70000"']);
  });

  it('applyOverrides re-checks the host against the keys', () => {
    const c = parseConfig(base(), ENV);
    const moved = applyOverrides(c, { port: 8080, host: 'localhost' });
    expect(moved.server).toMatchObject({ port: 8080, host: 'localhost' });
    expect(c.server.port).toBe(4000);
    expect(Object.isFrozen(moved.server)).toBe(true);
    expect(() => applyOverrides(c, { host: '0.0.0.0' })).toThrow(ConfigError);
    expect(() => applyOverrides(c, { port: -1 })).toThrow('--port: must be an integer from 0 to 65535');
  });

  it('refuses a server.host that server.listen cannot take, once, by name (found by the config fuzz)', () => {
    // Each passed check and then failed serve with getaddrinfo ENOTFOUND.
    for (const host of [' 127.0.0.1 ', '127.0.0.1\n', 'http://127.0.0.1', '127.0.0.1:4000', 'not a host']) {
      const doc = base();
      doc.server = { host };
      expect(problemsOf(doc), JSON.stringify(host)).toEqual([
        'server.host: must be an IP address or a hostname (no scheme, port or spaces)',
      ]);
    }
    // Empty is one problem, said as that.
    const empty = base();
    empty.server = { host: '' };
    expect(problemsOf(empty)).toEqual(['server.host: must not be empty']);
    const c = parseConfig(base(), ENV);
    expect(() => applyOverrides(c, { host: '0.0.0.0:80' })).toThrow('--host: must be an IP address or a hostname (no scheme, port or spaces)');
  });

  it('listens on a bracketed IPv6 host without its brackets', () => {
    const doc = base();
    doc.server = { host: '[::1]' };
    expect(parseConfig(doc, ENV).server.host).toBe('::1');
    expect(applyOverrides(parseConfig(base(), ENV), { host: '[::1]' }).server.host).toBe('::1');
  });

  it('does not call a host whose ${VAR} is unset public (found by the config fuzz)', () => {
    const doc = base();
    doc.server = { host: '${BIND_HOST}' };
    expect(problemsOf(doc)).toEqual(['server.host: environment variable BIND_HOST is not set']);
  });

  it('treats 127.0.0.0/8, ::1 and localhost as loopback and nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', 'localhost', '::ffff:127.0.0.1']) {
      expect(problemsOf(base(), { ...ENV, HOST: host }), host).toEqual([]);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1']) {
      expect(problemsOf(base(), { ...ENV, HOST: host }), host).toHaveLength(1);
    }
  });
});

describe('parseConfig: output', () => {
  it('is deeply frozen', () => {
    const c = parseConfig(base(), ENV);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.providers)).toBe(true);
    expect(Object.isFrozen(c.providers[0].headers)).toBe(true);
    expect(Object.isFrozen(c.models[0].deployments[0].capabilities)).toBe(true);
    expect(() => {
      (c.server as { port: number }).port = 1;
    }).toThrow(TypeError);
  });

  it('returns an already-parsed Config as it is, and does not touch the input document', () => {
    const doc = base();
    const c: Config = parseConfig(doc, ENV);
    expect(isParsedConfig(c)).toBe(true);
    expect(parseConfig(c, {})).toBe(c);
    expect(doc.providers[0].apiKey).toBe('${OPENAI_API_KEY}');
    expect(Object.isFrozen(doc)).toBe(false);
  });
});
