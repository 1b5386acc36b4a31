/**
 * Capacity taken for one attempt (or one client request). Exactly one of
 * `reconcile` or `cancel` must be called when the attempt is over; both are
 * idempotent, and whichever comes first wins.
 */
import type { UpstreamHeaders } from '../providers/types.js';

export interface Lease {
  /**
   * The request was sent. `actualTokens` (prompt + completion the response
   * reported) corrects the estimate that was reserved; omit it when the usage
   * is unknown (the estimate stands). `headers`, when given, are the
   * upstream's rate-limit headers, learned after this lease stops counting as
   * in flight (more exact than a separate `Pacer.observe`).
   */
  reconcile(actualTokens?: number, headers?: UpstreamHeaders): void;
  /**
   * The answer's head came with these headers (a stream's, long before it ends): learn the
   * upstream's limits now, so requests sent meanwhile are paced by them. `reconcile` with the
   * same headers then learns nothing twice. Idempotent; ignored once the lease is settled.
   */
  learn(headers: UpstreamHeaders): void;
  /** No request reached the upstream (the attempt never started): give everything back. */
  cancel(): void;
}

/** For callers with nothing to limit: no allocation, nothing to undo. */
export const NOOP_LEASE: Lease = Object.freeze({
  reconcile() {},
  learn() {},
  cancel() {},
});
