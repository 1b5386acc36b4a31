/**
 * Settings that beat the file (CONTRACT.md): environment variables, then the
 * CLI's `--port` / `--host`. They are written into the interpolated document
 * before validation, so the schema and the cross-checks (a public host without
 * keys) judge the configuration that will actually run.
 */
import { setIn } from './doc.js';
import type { Env } from './interpolate.js';
import { isListenHost, LISTEN_HOST_REASON } from './loopback.js';
import { isRedisUrl } from './schema.js';

export interface CliOverrides {
  port?: number;
  host?: string;
}

interface NumericVar {
  name: string;
  path: readonly string[];
  min: number;
  max?: number;
}

const NUMERIC_VARS: readonly NumericVar[] = [
  // Timer durations: at most 2^31-1 ms, as in the schema.
  { name: 'REQUEST_TIMEOUT_MS', path: ['resilience', 'requestTimeoutMs'], min: 1, max: 2_147_483_647 },
  { name: 'MAX_RETRIES', path: ['resilience', 'maxRetries'], min: 0 },
  { name: 'THROTTLE_MAX_WAIT_MS', path: ['resilience', 'throttleMaxWaitMs'], min: 0, max: 2_147_483_647 },
  { name: 'DEFAULT_RPM', path: ['limits', 'defaultRpm'], min: 1 },
  { name: 'PORT', path: ['server', 'port'], min: 0, max: 65_535 },
];

/**
 * Applies the environment overrides to `doc` in place; returns the problems with them.
 * A variable that a CLI flag beats (`PORT` under `--port`, `HOST` under `--host`) is
 * not read at all: its value cannot matter, so a bad one must not stop the gateway.
 */
export function applyEnvOverrides(doc: unknown, env: Env, cli?: CliOverrides): string[] {
  const problems: string[] = [];
  for (const v of NUMERIC_VARS) {
    if (v.name === 'PORT' && cli?.port !== undefined) continue;
    const raw = env[v.name]?.trim();
    if (raw === undefined || raw === '') continue; // empty means unset, as in most deploy tooling
    const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n) || n < v.min || (v.max !== undefined && n > v.max)) {
      const range = v.max === undefined ? `>= ${v.min}` : `from ${v.min} to ${v.max}`;
      problems.push(`env.${v.name}: must be an integer ${range}, got "${raw.slice(0, 32)}"`);
    } else setIn(doc, v.path, n);
  }

  const host = cli?.host === undefined ? env.HOST?.trim() : undefined;
  if (host && !isListenHost(host)) problems.push(`env.HOST: ${LISTEN_HOST_REASON}`);
  else if (host) setIn(doc, ['server', 'host'], host);

  const redisUrl = env.REDIS_URL?.trim();
  if (redisUrl) {
    if (!isRedisUrl(redisUrl)) problems.push('env.REDIS_URL: must be a redis:// or rediss:// URL');
    else {
      setIn(doc, ['state', 'backend'], 'redis');
      setIn(doc, ['state', 'redisUrl'], redisUrl);
    }
  }
  return problems;
}

/** Applies `--port` / `--host` to `doc` in place; returns the problems with them. */
export function applyCliOverrides(doc: unknown, o: CliOverrides | undefined): string[] {
  const problems = cliOverrideProblems(o);
  if (problems.length > 0 || o === undefined) return problems;
  if (o.port !== undefined) setIn(doc, ['server', 'port'], o.port);
  if (o.host !== undefined) setIn(doc, ['server', 'host'], o.host.trim());
  return [];
}

export function cliOverrideProblems(o: CliOverrides | undefined): string[] {
  const problems: string[] = [];
  if (o?.port !== undefined && !(Number.isInteger(o.port) && o.port >= 0 && o.port <= 65_535)) {
    problems.push('--port: must be an integer from 0 to 65535');
  }
  if (o?.host !== undefined && o.host.trim() === '') problems.push('--host: must not be empty');
  else if (o?.host !== undefined && !isListenHost(o.host.trim())) problems.push(`--host: ${LISTEN_HOST_REASON}`);
  return problems;
}
