/**
 * bench:ratelimit — does pacing keep a free tier from ever saying 429 while no
 * client sees an error?
 *
 * Three tiers behind one alias, in-process `simulated` providers:
 *   primary   a free tier that answers 429 above 20 requests per rolling minute
 *   secondary a second provider that does the same above 40
 *   local     unlimited but slow (a local model)
 * Load: an open loop (arrivals at a fixed rate, whatever the answers) at 3× the
 * primary's limit, for 60 s. By default on a compressed clock (a VirtualClock
 * that jumps to the next timer whenever the process is idle: a minute takes
 * well under a second, and every run is the same); `--real` runs in real time.
 *
 * Each provider's configured `rpm` equals its upstream's limit. That is exact
 * here because the gateway and the simulated upstream read one clock and the
 * pacer's rolling window rounds up to whole seconds. Against a real upstream,
 * set `rpm` a little under the limit: network delays that vary by more than
 * that rounding (a request that arrives late counts late upstream) could
 * otherwise push one request into the upstream's previous minute.
 *
 *   npm run bench:ratelimit
 *   npm run bench:ratelimit -- --seconds 120 --multiplier 5
 *   npm run bench:ratelimit -- --real --seconds 30
 *   npm run bench:ratelimit -- --unpaced    # contrast: no rpm configured
 *
 * Exits non-zero when any client request failed.
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { parseConfig } from '../src/config/parse.js';
import { systemClock, type Clock } from '../src/core/clock.js';
import { GatewayError } from '../src/core/errors.js';
import { createGateway, type ChatResponse } from '../src/core/gateway.js';
import { EventBus } from '../src/observability/events.js';
import { seededRandom } from '../src/core/clock.js';
import { VirtualClock } from '../test/helpers/virtual-clock.js';

export interface BenchOptions {
  /** Length of the load, in (virtual or real) seconds. */
  seconds: number;
  /** Offered load as a multiple of the primary's rpm. */
  multiplier: number;
  /** Real time instead of the compressed clock. */
  real: boolean;
  /** Configure no `rpm` (for contrast: limits are then learned only from 429s). */
  unpaced?: boolean;
}

interface Tier {
  name: string;
  provider: string;
  alias: string;
  /** The upstream's own limit (requests per rolling minute); undefined: none. */
  upstreamRpm: number | undefined;
  /** The gateway's configured pacing for it. */
  rpm: number | undefined;
  latencyMs: number;
}

const PRIMARY_RPM = 20;

const TIERS: readonly Tier[] = [
  { name: 'primary', provider: 'free-tier', alias: 'chat', upstreamRpm: PRIMARY_RPM, rpm: PRIMARY_RPM, latencyMs: 400 },
  { name: 'secondary', provider: 'second', alias: 'second', upstreamRpm: 40, rpm: 40, latencyMs: 600 },
  { name: 'local', provider: 'local', alias: 'local', upstreamRpm: undefined, rpm: undefined, latencyMs: 3_000 },
];

export interface TierReport {
  tier: string;
  provider: string;
  upstreamRpm: number | undefined;
  rpm: number | undefined;
  served: number;
  /** Upstream 429s this provider answered. */
  upstream429s: number;
  /** Times the gateway skipped it for lack of local capacity (no request sent). */
  throttledSkips: number;
}

export interface BenchReport {
  seconds: number;
  clock: 'compressed' | 'real';
  requests: number;
  ok: number;
  /** Client-visible errors by `status code`; the bar is none. */
  errors: Record<string, number>;
  tiers: TierReport[];
  /** Client-side latency percentiles, ms of the clock in use. */
  latencyMs: { p50: number; p95: number; max: number };
}

function config(unpaced: boolean) {
  return parseConfig(
    {
      providers: TIERS.map((t) => ({
        id: t.provider,
        type: 'simulated',
        ...(t.rpm === undefined || unpaced ? {} : { rpm: t.rpm }),
        simulate: {
          latencyMs: t.latencyMs,
          ttftMs: 0,
          tokensPerSecond: 1000,
          ...(t.upstreamRpm === undefined ? {} : { rpmLimit: t.upstreamRpm }),
        },
      })),
      models: TIERS.map((t, i) => ({
        name: t.alias,
        deployments: [{ provider: t.provider, model: `${t.provider}-model` }],
        fallbacks: i === 0 ? TIERS.slice(1).map((f) => f.alias) : [],
      })),
    },
    {},
  );
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export async function runRateLimitBench(opts: BenchOptions): Promise<BenchReport> {
  const clock: Clock = opts.real ? systemClock : new VirtualClock(Date.UTC(2026, 0, 1), true);
  const bus = new EventBus();
  const byProvider = new Map(TIERS.map((t) => [t.provider, { served: 0, upstream429s: 0, throttledSkips: 0 }]));
  bus.on('attempt', (e) => {
    const row = byProvider.get(e.trace.provider);
    if (!row) return;
    if (e.trace.status === 429) row.upstream429s++;
    if (e.trace.errorType === 'throttled') row.throttledSkips++;
  });
  const gw = createGateway(config(opts.unpaced === true), { clock, bus, random: seededRandom(42) });

  const intervalMs = 60_000 / (PRIMARY_RPM * opts.multiplier);
  const count = Math.floor((opts.seconds * 1000) / intervalMs);
  const errors: Record<string, number> = {};
  const latencies: number[] = [];
  let ok = 0;
  const start = clock.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + i * intervalMs;
    if (due > clock.now()) await clock.sleep(due - clock.now());
    const t0 = clock.now();
    inFlight.push(
      gw.chat({ model: 'chat', messages: [{ role: 'user', content: `request ${i}` }] }).then(
        (res) => {
          ok++;
          latencies.push(clock.now() - t0);
          const provider = (res as ChatResponse).meta.deployment.split('/')[0]!;
          byProvider.get(provider)!.served++;
        },
        (err: unknown) => {
          const key = err instanceof GatewayError ? `${err.status} ${err.code}` : `internal ${(err as Error).message}`;
          errors[key] = (errors[key] ?? 0) + 1;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  await gw.close();
  latencies.sort((a, b) => a - b);
  return {
    seconds: opts.seconds,
    clock: opts.real ? 'real' : 'compressed',
    requests: count,
    ok,
    errors,
    tiers: TIERS.map((t) => ({
      tier: t.name,
      provider: t.provider,
      upstreamRpm: t.upstreamRpm,
      rpm: opts.unpaced ? undefined : t.rpm,
      ...byProvider.get(t.provider)!,
    })),
    latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: latencies.at(-1) ?? 0 },
  };
}

export function formatReport(r: BenchReport): string {
  const rows = [
    ['tier', 'provider', 'upstream limit', 'paced at', 'served', 'share', 'upstream 429s', 'throttled skips'],
    ...r.tiers.map((t) => [
      t.tier,
      t.provider,
      t.upstreamRpm === undefined ? 'none' : `${t.upstreamRpm}/min`,
      t.rpm === undefined ? '-' : `${t.rpm} rpm`,
      String(t.served),
      r.ok === 0 ? '-' : `${((100 * t.served) / r.ok).toFixed(1)}%`,
      String(t.upstream429s),
      String(t.throttledSkips),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  const errorCount = Object.values(r.errors).reduce((s, n) => s + n, 0);
  const upstream429s = r.tiers.reduce((s, t) => s + t.upstream429s, 0);
  return [
    ...rows.map(line),
    '',
    `client 200s: ${r.ok} of ${r.requests}`,
    `client errors: ${errorCount === 0 ? 'none' : Object.entries(r.errors).map(([k, n]) => `${k} × ${n}`).join(', ')}`,
    `upstream 429s received: ${upstream429s}`,
    `client latency (${r.clock} ms): p50 ${Math.round(r.latencyMs.p50)}, p95 ${Math.round(r.latencyMs.p95)}, max ${Math.round(r.latencyMs.max)}`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '60' },
      multiplier: { type: 'string', default: '3' },
      real: { type: 'boolean', default: false },
      unpaced: { type: 'boolean', default: false },
    },
  });
  const opts: BenchOptions = {
    seconds: Number(values.seconds),
    multiplier: Number(values.multiplier),
    real: values.real === true,
    unpaced: values.unpaced === true,
  };
  if (!(opts.seconds > 0) || !(opts.multiplier > 0)) {
    console.error('--seconds and --multiplier must be positive numbers');
    process.exit(2);
  }
  const perMin = PRIMARY_RPM * opts.multiplier;
  console.log(
    `bench:ratelimit: ${perMin} requests/min (${opts.multiplier}× the primary's ${PRIMARY_RPM} rpm) for ${opts.seconds} s, ` +
      `${opts.real ? 'real time' : 'compressed clock'}${opts.unpaced ? ', NO rpm configured' : ''}; tiers: free tier 20/min → second 40/min → local (unlimited, slow)`,
  );
  const t0 = performance.now();
  const report = await runRateLimitBench(opts);
  console.log(formatReport(report));
  console.log(`(ran in ${((performance.now() - t0) / 1000).toFixed(2)} s of wall time)`);
  process.exitCode = Object.keys(report.errors).length === 0 ? 0 : 1;
}
