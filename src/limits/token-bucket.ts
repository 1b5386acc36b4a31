/**
 * Requests-per-minute pacing as a token bucket: `rpm / 60000` tokens refill per
 * millisecond up to a burst capacity, one token per request (per upstream call).
 *
 * Why the burst is smaller than `rpm`: a bucket as deep as the whole minute lets
 * a cold deployment fire a minute's worth of requests in one instant, and both
 * OpenAI and Anthropic document that they may enforce a per-minute limit over
 * shorter intervals ("60 RPM may be enforced as 1 request per second"), so such
 * a burst earns 429s. The default burst is one second's worth of the limit, but
 * never fewer than 10 requests (or the whole limit when it is smaller than 10),
 * so a small free tier is not starved by smoothing. The bucket only shapes
 * bursts; the hard "at most `rpm` in any rolling minute" guarantee comes from a
 * TokenWindow counting requests beside it (see pacer.ts), because a bucket alone
 * admits `burst + rpm` in a minute.
 */

/** Fewest requests a bucket lets through at once (unless the limit itself is smaller). */
export const MIN_BURST = 10;

export function defaultBurst(rpm: number): number {
  return Math.max(Math.min(rpm, MIN_BURST), Math.ceil(rpm / 60));
}

/** Floating-point slack: a level this close to 1 is a whole token, and a wait is not rounded up for dust. */
const LEVEL_SLACK = 1e-6;
const WAIT_SLACK = 1e-9;

export class TokenBucket {
  readonly rpm: number;
  readonly burst: number;
  /** Tokens per millisecond. */
  private readonly rate: number;
  private level: number;
  /** Last refill time; NaN until first use, when the bucket starts full. */
  private last = Number.NaN;

  constructor(rpm: number, burst: number = defaultBurst(rpm)) {
    if (!(rpm > 0)) throw new RangeError('rpm must be positive');
    this.rpm = rpm;
    this.burst = Math.max(1, burst);
    this.rate = rpm / 60_000;
    this.level = this.burst;
  }

  /**
   * Milliseconds until `n` tokens are available (0: now). Does not take them. More than the
   * burst can never be there at once: such a request (an embeddings request sent as many
   * calls) goes when the bucket is full, and its take leaves the level below zero, so what
   * follows waits for the whole debt to refill.
   */
  waitMs(now: number, n = 1): number {
    this.refill(now);
    const need = n < this.burst ? n : this.burst;
    if (this.level >= need - LEVEL_SLACK) return 0;
    return Math.max(1, Math.ceil((need - this.level) / this.rate - WAIT_SLACK));
  }

  /** Take `n` tokens unconditionally (call after `waitMs` returned 0). */
  take(now: number, n = 1): void {
    this.refill(now);
    this.level -= n;
  }

  /** Take one token if there is one: 0, else the milliseconds until there will be. */
  tryTake(now: number): number {
    const wait = this.waitMs(now);
    if (wait === 0) this.level -= 1;
    return wait;
  }

  /** Return the tokens taken for an attempt that was never sent. */
  giveBack(n = 1): void {
    this.level = Math.min(this.burst, this.level + n);
  }

  /** Tokens available now (for tests and metrics). */
  available(now: number): number {
    this.refill(now);
    return this.level;
  }

  private refill(now: number): void {
    if (Number.isNaN(this.last)) {
      this.last = now;
      return;
    }
    if (now <= this.last) return;
    this.level = Math.min(this.burst, this.level + (now - this.last) * this.rate);
    this.last = now;
  }
}
