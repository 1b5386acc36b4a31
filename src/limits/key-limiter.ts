/**
 * Client-key limits (`keys[].rpm`, `keys[].tpm`): at most that many requests
 * and tokens per rolling minute for one key. Exceeding them is the one case
 * the client sees a 429 (`rate_limited`, with Retry-After).
 *
 * Unlike outbound pacing there is no burst smoothing: a client may spend its
 * minute's quota however it likes. A request is admitted while the key's
 * tokens this minute are below its tpm — the usage of requests served, and
 * the estimates of those still in flight until their usage corrects them — so
 * the last one in a minute may go over by its own size. Requiring the new
 * request's whole estimate to fit instead, as outbound pacing must (upstreams
 * count max_tokens when a request arrives), made a small quota useless: with
 * `tpm: 500` and no max_tokens (a 1,024-token completion budget) every request
 * needed an empty minute, whatever the last one really used.
 */
import type { KeyConfig } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { UpstreamHeaders } from '../providers/types.js';
import { MemoryStateStore } from '../state/memory-store.js';
import type { StateStore } from '../state/store.js';
import { NOOP_LEASE, type Lease } from './lease.js';
import { TokenWindow } from './token-window.js';

export type KeyCheck = { ok: true; lease: Lease } | { ok: false; retryAfterMs: number };

const UNLIMITED: KeyCheck = Object.freeze({ ok: true, lease: NOOP_LEASE });

class KeyWindows {
  constructor(
    readonly requests: TokenWindow | null,
    readonly tokens: TokenWindow | null,
  ) {}
}

export class KeyLimiter {
  private readonly windows = new Map<string, KeyWindows>();

  constructor(
    private readonly clock: Clock,
    private readonly store: StateStore = new MemoryStateStore(),
  ) {}

  /** Take one request of about `estimatedTokens` from `key`'s minute, or say when the minute has room. `now`: the caller's clock reading, when it took one just now. */
  check(key: KeyConfig, estimatedTokens: number, now = this.clock.now()): KeyCheck {
    if (!(key.rpm && key.rpm > 0) && !(key.tpm && key.tpm > 0)) return UNLIMITED;
    const w = this.windowsFor(key);
    const tokens = estimatedTokens > 0 ? estimatedTokens : 0;
    let wait = w.requests ? w.requests.waitMs(1, now) : 0;
    if (w.tokens) wait = Math.max(wait, w.tokens.waitMs(1, now)); // room for any of it (see above)
    if (wait > 0) return { ok: false, retryAfterMs: wait };
    w.requests?.reserve(1, now);
    w.tokens?.reserve(tokens, now);
    return { ok: true, lease: new KeyLease(w, tokens, now, this.clock) };
  }

  private windowsFor(key: KeyConfig): KeyWindows {
    let w = this.windows.get(key.id);
    if (w === undefined) {
      w = this.store.local(
        `key:${key.id}`,
        () =>
          new KeyWindows(
            key.rpm && key.rpm > 0 ? new TokenWindow(key.rpm) : null,
            key.tpm && key.tpm > 0 ? new TokenWindow(key.tpm) : null,
          ),
      );
      this.windows.set(key.id, w);
    }
    return w;
  }
}

class KeyLease implements Lease {
  private done = false;

  constructor(
    private readonly w: KeyWindows,
    private readonly tokens: number,
    private readonly at: number,
    private readonly clock: Clock,
  ) {}

  reconcile(actualTokens?: number, _headers?: UpstreamHeaders): void {
    if (this.done) return;
    this.done = true;
    if (actualTokens === undefined || !Number.isFinite(actualTokens) || actualTokens < 0) return;
    this.w.tokens?.adjust(this.at, actualTokens - this.tokens, this.clock.now());
  }

  /** A key's quota learns nothing from an upstream's headers. */
  learn(): void {}

  /** The request was refused before it was served (e.g. no candidate could take it): it does not count. */
  cancel(): void {
    if (this.done) return;
    this.done = true;
    const now = this.clock.now();
    this.w.requests?.adjust(this.at, -1, now);
    this.w.tokens?.adjust(this.at, -this.tokens, now);
  }
}
