/**
 * A rolling-minute budget: at most `limit` units (tokens, or requests) reserved
 * in any 60 s. Reservations are summed per one-second slot in a fixed ring, so
 * every operation is O(1) amortised and the memory is constant.
 *
 * A reservation made anywhere inside second `s` is released at the end of
 * second `s + 60` (between 60 and 61 s after it was made): rounding the window
 * up, never down, so the upstream's own rolling minute never sees more than
 * `limit`.
 *
 * A single reservation larger than the whole limit would never fit; it is let
 * through once the window is empty instead, so an oversized request waits for
 * a quiet minute rather than failing forever.
 */

export const WINDOW_MS = 60_000;
const SLOT_MS = 1_000;
const WINDOW_SLOTS = WINDOW_MS / SLOT_MS;
/** The current second plus the 60 before it. */
const RING = WINDOW_SLOTS + 1;

export class TokenWindow {
  readonly limit: number;
  private readonly secs = new Float64Array(RING).fill(-1);
  private readonly amounts = new Float64Array(RING);
  private total = 0;
  /** Oldest second that may still hold a live reservation; NaN until first use. */
  private oldest = Number.NaN;

  constructor(limit: number) {
    if (!(limit > 0)) throw new RangeError('limit must be positive');
    this.limit = limit;
  }

  /** Units reserved in the current window. */
  used(now: number): number {
    this.expire(now);
    return this.total;
  }

  /** Milliseconds until `n` more units fit (0: now). Does not reserve them. */
  waitMs(n: number, now: number): number {
    this.expire(now);
    const fits = Math.min(n, this.limit);
    if (this.total + fits <= this.limit) return 0;
    // Walk from the oldest second until enough would have expired.
    const mustFree = this.total + fits - this.limit;
    const current = Math.floor(now / SLOT_MS);
    let freed = 0;
    for (let s = this.oldest; s <= current; s++) {
      const i = slot(s);
      if (this.secs[i] !== s) continue;
      freed += this.amounts[i]!;
      if (freed >= mustFree) return Math.max(1, (s + 1) * SLOT_MS + WINDOW_MS - now);
    }
    // Unreachable while `total` matches the slots; be safe rather than spin.
    return WINDOW_MS;
  }

  /** Reserve `n` units now, unconditionally (call after `waitMs` returned 0). */
  reserve(n: number, now: number): void {
    this.expire(now);
    const s = Math.floor(now / SLOT_MS);
    const i = slot(s);
    if (this.secs[i] !== s) {
      this.secs[i] = s;
      this.amounts[i] = 0;
    }
    this.amounts[i]! += n;
    this.total += n;
  }

  /**
   * Correct a reservation made at `at` by `delta` units (negative gives back):
   * reconciling an estimate with the usage the response reported, or undoing
   * a reservation for an attempt never sent. No-op once it has expired.
   */
  adjust(at: number, delta: number, now: number): void {
    this.expire(now);
    const s = Math.floor(at / SLOT_MS);
    const i = slot(s);
    if (this.secs[i] !== s || s < this.oldest) return;
    const next = Math.max(0, this.amounts[i]! + delta);
    this.total += next - this.amounts[i]!;
    this.amounts[i] = next;
  }

  private expire(now: number): void {
    const firstLive = Math.floor(now / SLOT_MS) - WINDOW_SLOTS;
    if (Number.isNaN(this.oldest) || firstLive - this.oldest >= RING) {
      this.secs.fill(-1);
      this.amounts.fill(0);
      this.total = 0;
      this.oldest = firstLive;
      return;
    }
    while (this.oldest < firstLive) {
      const i = slot(this.oldest);
      if (this.secs[i] === this.oldest) {
        this.total -= this.amounts[i]!;
        this.amounts[i] = 0;
        this.secs[i] = -1;
      }
      this.oldest++;
    }
    // Guard against drift from many float adds; units are whole numbers in practice.
    if (this.total < 1e-9) this.total = 0;
  }
}

function slot(s: number): number {
  return ((s % RING) + RING) % RING;
}
