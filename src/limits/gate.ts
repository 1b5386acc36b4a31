/**
 * The executor's capacity gate, built on the Pacer (take now, or say when) and
 * the WaitGate (bounded waiting for the earliest candidate). It also reports
 * every throttle decision on the event bus for metrics.
 */
import type { Clock } from '../core/clock.js';
import type { Config } from '../config/types.js';
import type { EventBus } from '../observability/events.js';
import type { Candidate } from '../routing/chain.js';
import type { Deployment } from '../routing/deployment.js';
import type { CapacityGate } from '../resilience/executor.js';
import type { RequestRun } from '../resilience/run.js';
import { isThrottled, Pacer, type CallsFor } from './pacer.js';
import { WaitGate } from './wait-gate.js';

export class LimitsGate implements CapacityGate {
  readonly pacer: Pacer;
  private readonly waitGate: WaitGate;
  private readonly maxWaitMs: number;

  constructor(
    config: Config,
    private readonly clock: Clock,
    private readonly bus: EventBus,
  ) {
    this.pacer = new Pacer(config, clock);
    this.waitGate = new WaitGate(this.pacer, clock);
    this.maxWaitMs = config.resilience.throttleMaxWaitMs;
  }

  acquire(d: Deployment, _run: RequestRun, tokens: number, now = this.clock.now(), calls = 1) {
    // Waiters already due are served before this newcomer (first come, first served).
    this.waitGate.serveDue(now);
    const r = this.pacer.tryAcquire(d, tokens, now, calls);
    if (!isThrottled(r)) return { ok: true as const, lease: r };
    this.bus.emit('throttle', { deployment: d.key, waitedMs: 0, outcome: 'skipped' });
    return { ok: false as const, retryAt: now + r.waitMs };
  }

  hold(d: Deployment, until: number): void {
    this.pacer.block(d, until);
  }

  async wait(candidates: readonly Candidate[], run: RequestRun, tokens: number, callsFor?: CallsFor) {
    const deps = candidates.map((c) => c.deployment);
    const budget = Math.min(this.maxWaitMs, run.deadlineAt - this.clock.now());
    const t0 = this.clock.now();
    const g = await this.waitGate.wait(deps, tokens, Math.max(0, budget), run.signal, callsFor).catch((err: unknown) => {
      // The request ended while it waited (the client left, the deadline, the shutdown): a wait
      // with an outcome too, or the counter's outcomes would not add up to the waits begun.
      this.bus.emit('throttle', { deployment: deps[0]!.key, waitedMs: this.clock.now() - t0, outcome: 'aborted' });
      throw err;
    });
    if (!g.ok) {
      this.bus.emit('throttle', { deployment: deps[0]!.key, waitedMs: g.waitedMs, outcome: g.reason });
      return { retryAt: this.clock.now() + g.retryAfterMs };
    }
    this.bus.emit('throttle', { deployment: g.dep.key, waitedMs: g.waitedMs, outcome: 'acquired' });
    return { candidate: candidates[g.index]!, lease: g.lease };
  }
}
