/**
 * Where finished requests' TraceRecords are kept for `GET /traces`. Two
 * implementations (memory ring, SQLite) share this interface and one
 * conformance suite (trace-store.test.ts).
 *
 * Order is newest first by `startedAt`, ties broken by the order records were
 * added (later first). Records arrive when a request *finishes*, so a long
 * stream is added after shorter requests that started later; sorting by start
 * keeps the list consistent with the `since` filter, which also reads startedAt.
 */
import type { TraceRecord } from './events.js';

export interface TraceFilter {
  fallbackUsed?: boolean;
  routedProvider?: string;
  /** Matches the model the client asked for (alias, `auto`, `PROVIDER/MODEL`) or the concrete model that served. */
  model?: string;
  /** HTTP status returned to the client. */
  status?: number;
  keyId?: string;
  /** Epoch ms: only requests started at or after this instant. */
  since?: number;
  /** Default 50, max 1000. */
  limit?: number;
}

export interface TraceStore {
  /** O(1) and never throws: called from the request path (buffered). */
  add(t: TraceRecord): void;
  query(f: TraceFilter): TraceRecord[];
  /** The most recently added record with this id (client request ids may repeat). */
  get(id: string): TraceRecord | undefined;
  close(): Promise<void>;
}

export const DEFAULT_TRACE_LIMIT = 50;
export const MAX_TRACE_LIMIT = 1000;

export function resolveLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_TRACE_LIMIT;
  return Math.min(MAX_TRACE_LIMIT, Math.max(1, Math.floor(limit)));
}

/** Epoch ms of a record's start; 0 for an unparsable timestamp (sorts last, fails any `since`). */
export function startedAtMs(t: TraceRecord): number {
  return parseStartedAt(t.startedAt);
}

export function parseStartedAt(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : ms;
}

/** The filter as a predicate, for stores that scan (`since` is checked by the caller, which has the parsed time). */
export function matchesFilter(t: TraceRecord, f: TraceFilter): boolean {
  if (f.fallbackUsed !== undefined && t.fallbackUsed !== f.fallbackUsed) return false;
  if (f.routedProvider !== undefined && t.routedProvider !== f.routedProvider) return false;
  if (f.model !== undefined && t.model !== f.model && t.routedModel !== f.model) return false;
  if (f.status !== undefined && t.status !== f.status) return false;
  if (f.keyId !== undefined && t.keyId !== f.keyId) return false;
  return true;
}
