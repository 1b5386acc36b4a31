/**
 * One attempt's abort plumbing: its own Cancellation, linked to the
 * request's signal (client gone, deadline), plus one timer that aborts with
 * the reason that names the limit (attempt timeout, TTFT, stall). Disposing
 * clears the timer and unlinks the listener, so nothing outlives the attempt.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { Cancellation, type Signal } from '../core/signal.js';
import { AttemptAborted, type AbortKind } from './abort.js';

export class AttemptScope {
  private readonly controller = new Cancellation();
  private timer: TimerHandle | undefined;
  private ms = 0;
  private kind: AbortKind = 'idle';
  private message: string | undefined;
  /** The consumer holds a chunk (a slow client, backpressure): the timer may not abort. */
  private held = false;
  private expiredWhileHeld = false;
  private readonly onTimer = () => {
    if (this.held) this.expiredWhileHeld = true;
    else this.controller.abort(new AttemptAborted(this.kind, this.message ?? limitMessage(this.kind, this.ms)));
  };
  private readonly unlink: () => void;

  constructor(
    parent: Signal,
    readonly clock: Clock,
  ) {
    this.unlink = this.controller.follow(parent);
  }

  get signal(): Signal {
    return this.controller;
  }

  /**
   * (Re)arm the single timer: after `ms`, abort with `kind`. Without a
   * `message`, one naming the limit is made if the timer fires (most never do:
   * no string built per attempt).
   */
  arm(ms: number, kind: AbortKind, message?: string): void {
    this.timer?.clear();
    this.ms = Math.max(0, ms);
    this.kind = kind;
    this.message = message;
    this.expiredWhileHeld = false;
    this.timer = this.clock.setTimer(this.onTimer, this.ms);
  }

  /** The consumer has the chunk: a slow reader must not look like a stalled upstream. */
  hold(): void {
    this.held = true;
  }

  /**
   * The consumer wants the next chunk: the countdown starts again from here.
   * `restart` false: the caller restarts it itself (`refresh`) before it waits,
   * or hands over a chunk at once (then it is held again) — one clock read
   * where two would follow each other.
   */
  release(restart = true): void {
    this.held = false;
    if (!this.expiredWhileHeld) {
      if (restart) this.timer?.refresh();
      return;
    }
    // A fired timer cannot be refreshed everywhere (virtual clocks): arm a fresh one.
    this.expiredWhileHeld = false;
    this.timer = this.clock.setTimer(this.onTimer, this.ms);
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
    this.unlink();
  }
}

function limitMessage(kind: AbortKind, ms: number): string {
  if (kind === 'ttft') return `no first token within ${ms} ms`;
  if (kind === 'attempt_timeout') return `no answer within ${ms} ms`;
  return `aborted after ${ms} ms`;
}
