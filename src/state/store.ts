/**
 * The seam between the gateway's mutable shared state (rate buckets and
 * windows, client-key windows; later breakers and cooldowns) and where it lives.
 *
 * What exists today is deliberately small: `local(key, create)` hands out the
 * one in-process object for a key, built on first use. Every decision on the
 * request path (may this attempt go now?) is made synchronously against these
 * objects, so the hot path never awaits a store.
 *
 * How a shared backend would sit here, not built yet: keep exactly these local
 * objects and decisions, and reconcile them with other instances off the hot
 * path: every flush interval, add this instance's usage since the last flush to
 * a shared per-key, per-second counter (INCRBY + EXPIRE, or one Lua script), and
 * fold the other instances' usage back into the local window as foreign
 * reservations. Shared limits are then exact per instance and approximate
 * across instances by one flush interval. That needs a `merge`/`snapshot` pair
 * on TokenWindow and an async flush loop here; neither exists, and
 * `state.backend: redis` must not be offered as working until they do.
 */
export interface StateStore {
  /** Which backend this is, for readiness and logs. */
  readonly backend: 'memory';
  /**
   * The in-process object for `key`, built by `create` the first time.
   * Callers namespace keys (`pace:provider:ID`, `key:ID`) so one key always
   * holds one kind of object.
   */
  local<T extends object>(key: string, create: () => T): T;
  /** Number of objects held (leak checks, metrics). */
  readonly size: number;
  close(): Promise<void>;
}
