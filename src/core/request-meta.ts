/**
 * The routing facts every routed response carries (CONTRACT.md's headers).
 */
import type { RequestRun } from '../resilience/run.js';

export interface RoutingMeta {
  requestId: string;
  /** `PROVIDER_ID/MODEL` that served. */
  deployment: string;
  selection: string;
  /** Upstream attempts made (candidates skipped without a call are not attempts). */
  attempts: number;
  fallback: boolean;
  overheadMs: number;
}

/**
 * A client's `x-request-id` is kept when it is a sane token (no spaces, quotes or control
 * bytes), else replaced. Not `.` or `..`: clients normalise those away in `/traces/:id`.
 */
export const REQUEST_ID_RE = /^(?!\.\.?$)[\w.:@/+=-]{1,128}$/;

export function metaOf(run: RequestRun): RoutingMeta {
  return {
    requestId: run.id,
    deployment: run.served?.deployment.key ?? '',
    selection: run.served?.selection ?? '',
    attempts: run.upstreamAttempts(),
    fallback: run.fallbackUsed,
    overheadMs: run.overheadMs,
  };
}
