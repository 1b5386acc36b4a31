/**
 * One attempt's abort plumbing: its own AbortController, linked to the
 * request's signal (client gone, deadline), plus one timer that aborts with
 * the reason that names the limit (attempt timeout, TTFT, stall). Disposing
 * clears the timer and unlinks the listener, so nothing outlives the attempt.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { AttemptAborted, type AbortKind } from './abort.js';

export class AttemptScope {
  private readonly controller = new AbortController();
  private timer: TimerHandle | undefined;
  private readonly onParentAbort = () => this.controller.abort(this.parent.reason);

  constructor(
    private readonly parent: AbortSignal,
    private readonly clock: Clock,
  ) {
    if (parent.aborted) this.controller.abort(parent.reason);
    else parent.addEventListener('abort', this.onParentAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** (Re)arm the single timer: after `ms`, abort with `kind`. */
  arm(ms: number, kind: AbortKind, message: string): void {
    this.timer?.clear();
    this.timer = this.clock.setTimer(() => this.controller.abort(new AttemptAborted(kind, message)), Math.max(0, ms));
  }

  /** Restart the armed timer's countdown (a chunk arrived): no allocation. */
  refresh(): void {
    this.timer?.refresh();
  }

  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  dispose(): void {
    this.timer?.clear();
    this.timer = undefined;
    this.parent.removeEventListener('abort', this.onParentAbort);
  }
}
