/**
 * The fault script: for each request, one pure decision of what the simulated
 * upstream does. Shared by the in-process `simulated` adapter and the loopback
 * fault server so both misbehave identically for the same config and seed.
 */
import type { Clock, Random } from '../../core/clock.js';
import type { FaultRule, SimulateConfig } from '../../config/types.js';
import { DEFAULTS } from '../../config/defaults.js';

export type Plan =
  | { kind: 'ok'; extraDelayMs: number }
  | { kind: 'rate_limit'; retryAfterS?: number }
  | { kind: 'status'; status: number; message?: string }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'stream_abort'; afterChunks: number }
  /** Send `afterChunks` content chunks, then go silent with the connection open. */
  | { kind: 'stall'; afterChunks: number };

const RPM_WINDOW_MS = 60_000;
const DEFAULT_STATUS = 500;
/** Content chunks before the cut (1: a resumed stream has something to continue from). */
const DEFAULT_AFTER_CHUNKS = DEFAULTS.simulate.streamAbortAfterChunks;

export class FaultScript {
  private readonly queue: Plan[] = [];
  /** Times of requests admitted by the free tier, oldest first (at most rpmLimit long). */
  private readonly admitted: number[] = [];

  constructor(
    private readonly sim: Pick<SimulateConfig, 'faults' | 'rpmLimit'>,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly startedAt = clock.now(),
  ) {}

  /**
   * Make the next decide() calls return these plans, in order, before any rule
   * is consulted. Queued plans bypass the free tier and are not counted by it.
   */
  enqueue(...plans: Plan[]): void {
    this.queue.push(...plans);
  }

  /** Drop plans still queued: a test that failed before its requests ran must not hand them to the next. */
  clear(): void {
    this.queue.length = 0;
  }

  decide(): Plan {
    const queued = this.queue.shift();
    if (queued) return queued;
    const now = this.clock.now();
    // The free tier is the front door: a request over the limit never reaches the rules.
    const limited = this.freeTier(now);
    if (limited) return limited;
    const offset = now - this.startedAt;
    let extraDelayMs = 0;
    for (const rule of this.sim.faults) {
      if (!this.applies(rule, offset)) continue;
      if (rule.kind === 'slow') {
        extraDelayMs += rule.delayMs ?? 0;
        continue;
      }
      return planOf(rule);
    }
    return { kind: 'ok', extraDelayMs };
  }

  /**
   * The free tier as an upstream reports it in `x-ratelimit-*-requests`:
   * `resetMs` is OpenAI's "time until fully replenished", here when the newest
   * admitted request leaves the rolling minute. Undefined without `rpmLimit`.
   */
  freeTierStatus(): { limit: number; remaining: number; resetMs: number } | undefined {
    const limit = this.sim.rpmLimit;
    if (limit === undefined) return undefined;
    const now = this.clock.now();
    const admitted = this.admitted;
    while (admitted.length > 0 && now - admitted[0]! >= RPM_WINDOW_MS) admitted.shift();
    const newest = admitted.length > 0 ? admitted[admitted.length - 1]! : now - RPM_WINDOW_MS;
    return { limit, remaining: Math.max(0, limit - admitted.length), resetMs: newest + RPM_WINDOW_MS - now };
  }

  private freeTier(now: number): Plan | undefined {
    const limit = this.sim.rpmLimit;
    if (limit === undefined) return undefined;
    const admitted = this.admitted;
    while (admitted.length > 0 && now - admitted[0]! >= RPM_WINDOW_MS) admitted.shift();
    if (admitted.length >= limit) {
      const retryAfterS =
        admitted.length > 0 ? Math.ceil((admitted[0]! + RPM_WINDOW_MS - now) / 1000) : RPM_WINDOW_MS / 1000;
      return { kind: 'rate_limit', retryAfterS };
    }
    admitted.push(now);
    return undefined;
  }

  private applies(rule: FaultRule, offset: number): boolean {
    if (rule.fromMs !== undefined && offset < rule.fromMs) return false;
    if (rule.toMs !== undefined && offset >= rule.toMs) return false;
    const p = rule.probability ?? 1;
    // Certain outcomes draw no random number, so adding an always-on rule does
    // not shift the seeded sequence seen by the probabilistic ones.
    if (p >= 1) return true;
    if (p <= 0) return false;
    return this.random() < p;
  }
}

function planOf(rule: FaultRule): Plan {
  switch (rule.kind) {
    case 'rate_limit':
      return rule.retryAfterS === undefined ? { kind: 'rate_limit' } : { kind: 'rate_limit', retryAfterS: rule.retryAfterS };
    case 'status':
      return rule.message === undefined
        ? { kind: 'status', status: rule.status ?? DEFAULT_STATUS }
        : { kind: 'status', status: rule.status ?? DEFAULT_STATUS, message: rule.message };
    case 'hang':
      return { kind: 'hang' };
    case 'reset':
      return { kind: 'reset' };
    case 'stream_abort':
      return { kind: 'stream_abort', afterChunks: rule.afterChunks ?? DEFAULT_AFTER_CHUNKS };
    case 'stall':
      return { kind: 'stall', afterChunks: rule.afterChunks ?? DEFAULT_AFTER_CHUNKS };
    case 'slow':
      return { kind: 'ok', extraDelayMs: rule.delayMs ?? 0 };
  }
}
