/**
 * The configured limits of one scope: a provider (shared by all its
 * deployments) or a single deployment. `rpm` is enforced twice on purpose: the
 * bucket spreads bursts out, the rolling request window guarantees "at most
 * `rpm` in any minute", which a bucket alone does not (see token-bucket.ts).
 */
import { TokenBucket } from './token-bucket.js';
import { TokenWindow } from './token-window.js';

export class ScopeLimits {
  readonly rpm: number | undefined;
  readonly tpm: number | undefined;
  private readonly bucket: TokenBucket | null;
  private readonly requests: TokenWindow | null;
  private readonly tokens: TokenWindow | null;

  constructor(rpm: number | null | undefined, tpm: number | null | undefined) {
    this.rpm = rpm != null && rpm > 0 ? rpm : undefined;
    this.tpm = tpm != null && tpm > 0 ? tpm : undefined;
    this.bucket = this.rpm ? new TokenBucket(this.rpm) : null;
    this.requests = this.rpm ? new TokenWindow(this.rpm) : null;
    this.tokens = this.tpm ? new TokenWindow(this.tpm) : null;
  }

  /** Milliseconds until one request of `tokens`, sent as `calls` upstream calls, fits every limit here (0: now). */
  waitMs(tokens: number, now: number, calls = 1): number {
    let w = 0;
    if (this.bucket) w = this.bucket.waitMs(now, calls);
    if (this.requests) w = Math.max(w, this.requests.waitMs(calls, now));
    if (this.tokens) w = Math.max(w, this.tokens.waitMs(tokens, now));
    return w;
  }

  /** Take one request of `tokens` and `calls` calls (after `waitMs` returned 0). */
  take(tokens: number, now: number, calls = 1): void {
    this.bucket?.take(now, calls);
    this.requests?.reserve(calls, now);
    this.tokens?.reserve(tokens, now);
  }

  /** Undo a `take` made at `at` for a request that was never sent. */
  giveBack(tokens: number, at: number, now: number, calls = 1): void {
    this.bucket?.giveBack(calls);
    this.requests?.adjust(at, -calls, now);
    this.tokens?.adjust(at, -tokens, now);
  }

  /** Correct the tokens reserved at `at` by `delta` (actual minus estimate). */
  adjustTokens(at: number, delta: number, now: number): void {
    this.tokens?.adjust(at, delta, now);
  }
}
