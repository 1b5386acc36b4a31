/**
 * What an upstream's own rate-limit headers say is left, kept as a bucket:
 * `remaining` now, refilling linearly to `limit` by `resetAt`, after which the
 * observation expires and stops constraining anything.
 *
 * Both dialects mean "time until fully replenished" by their reset (OpenAI's
 * `x-ratelimit-reset-*` duration, Anthropic's `anthropic-ratelimit-*-reset`
 * instant), and both refill continuously, so a linear refill to the limit is
 * what the upstream itself does. Without a known limit the refill is taken as
 * a step at `resetAt`: slower than the truth, never faster.
 *
 * Each observation replaces the last (the upstream is authoritative), minus
 * what is still in flight from here: those requests may not have reached the
 * upstream when it counted. This works whether or not the config knows the
 * limit: it is how a limit the config does not mention is still respected.
 */
export class LearnedLimit {
  private level = 0;
  private at = 0;
  private rate = 0;
  private limit = Number.POSITIVE_INFINITY;
  private resetAt = 0;
  /** Bumped by every observation; a lease only gives back into its own epoch. */
  epoch = 0;

  /**
   * @param remaining what the upstream reported left
   * @param resetAt epoch ms when it is fully replenished
   * @param inFlight units this gateway has sent that the upstream may not have counted yet
   * @param limit the upstream's full limit, when reported
   */
  observe(remaining: number, resetAt: number, inFlight: number, now: number, limit?: number): void {
    this.epoch++;
    if (!(resetAt > now)) {
      this.resetAt = 0;
      return;
    }
    this.level = remaining - inFlight;
    this.at = now;
    this.resetAt = resetAt;
    this.limit = limit !== undefined && limit >= remaining ? limit : Number.POSITIVE_INFINITY;
    this.rate = Number.isFinite(this.limit) ? (this.limit - remaining) / (resetAt - now) : 0;
  }

  /** Whether an observation still constrains at `now`. */
  active(now: number): boolean {
    return now < this.resetAt;
  }

  /** Milliseconds until `n` units are available (0: now, or nothing learned). */
  waitMs(n: number, now: number): number {
    if (now >= this.resetAt) return 0;
    const have = this.current(now);
    if (have >= n - 1e-6) return 0;
    const untilReset = this.resetAt - now;
    if (this.rate <= 0) return untilReset;
    return Math.max(1, Math.min(untilReset, Math.ceil((n - have) / this.rate - 1e-9)));
  }

  take(n: number, now: number): void {
    if (now < this.resetAt) this.level -= n;
  }

  /** Undo (negative `n`: add) a take made in `epoch`; ignored once a newer observation replaced it. */
  giveBack(n: number, epoch: number, now: number): void {
    if (epoch === this.epoch && now < this.resetAt) this.level += n;
  }

  private current(now: number): number {
    return this.rate > 0 ? Math.min(this.limit, this.level + (now - this.at) * this.rate) : this.level;
  }
}
