/**
 * Timers for the request path without a Node Timeout each. Every request arms
 * a deadline and every attempt a timeout, and nearly all of them are cleared
 * long before they fire; a Node Timeout costs an object with async-hook ids, a
 * list insert and a ref-count toggle (unref) in C++ for each. Here the timers
 * of one duration share a list in due order (Node's own design, see
 * lib/internal/timers.js) and one unref'd Node Timeout per list, set for its
 * head and rescheduled only when it fires: arming, clearing and refreshing are
 * a few field writes. Due times are monotonic (performance.now), so a wall-clock
 * jump delays or hastens nothing.
 */
import type { TimerHandle } from './clock.js';

class Entry implements TimerHandle {
  prev: Entry | null = null;
  next: Entry | null = null;
  due = 0;
  linked = false;

  constructor(
    private readonly list: TimerList,
    readonly fn: () => void,
  ) {}

  clear(): void {
    if (this.linked) this.list.remove(this);
  }

  /** Restart the countdown from now (also after it fired, like Timeout#refresh). */
  refresh(): void {
    if (this.linked) this.list.remove(this);
    this.list.append(this);
  }
}

class TimerList {
  private head: Entry | null = null;
  private tail: Entry | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** When the Node timer fires (Infinity: none set). */
  private firesAt = Number.POSITIVE_INFINITY;

  constructor(private readonly ms: number) {}

  /** No timer armed on it. */
  get idle(): boolean {
    return this.head === null;
  }

  append(e: Entry): void {
    // Same duration for all: appending keeps the list in due order.
    e.due = performance.now() + this.ms;
    e.prev = this.tail;
    e.next = null;
    e.linked = true;
    if (this.tail) this.tail.next = e;
    else this.head = e;
    this.tail = e;
    if (e.due < this.firesAt) this.schedule(e.due);
  }

  remove(e: Entry): void {
    if (e.prev) e.prev.next = e.next;
    else this.head = e.next;
    if (e.next) e.next.prev = e.prev;
    else this.tail = e.prev;
    e.prev = e.next = null;
    e.linked = false;
    // The Node timer stays set: when it fires it finds the new head and reschedules.
  }

  private schedule(due: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.firesAt = due;
    this.timer = setTimeout(this.fire, Math.max(1, due - performance.now()));
    this.timer.unref();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.firesAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let failure: { err: unknown } | undefined;
    let e: Entry | null;
    while ((e = this.head) !== null && e.due <= now) {
      this.remove(e);
      try {
        e.fn();
      } catch (err) {
        failure ??= { err };
      }
    }
    if (this.head !== null) this.schedule(this.head.due);
    // As with setTimeout, a throwing callback is a bug that surfaces as an
    // uncaught exception — but only after the others ran and the list is rescheduled.
    if (failure) throw failure.err;
  };
}

const lists = new Map<number, TimerList>();
/**
 * Request timers use a handful of configured durations; computed ones (the
 * wait gate's wait until some instant) would each add a list. Past this many,
 * an idle list makes room, else `setListTimer` says no and the caller uses a
 * plain Timeout.
 */
const MAX_LISTS = 64;

/** Run `fn` once after `ms` (unless cleared), or undefined when `ms` is not a duration worth a list. */
export function setListTimer(fn: () => void, ms: number): TimerHandle | undefined {
  const d = Math.max(1, Math.ceil(ms));
  let list = lists.get(d);
  if (list === undefined) {
    if (lists.size >= MAX_LISTS && !dropIdleList()) return undefined;
    lists.set(d, (list = new TimerList(d)));
  }
  const e = new Entry(list, fn);
  list.append(e);
  return e;
}

/**
 * Forget one list with no timer on it. Lists were kept for good, so the first 64
 * distinct durations — mostly the wait gate's one-off waits in the first throttled
 * moments of a run — held every place, and each configured duration first armed
 * after that (a fallback deployment's own ttftTimeoutMs, say) cost a Node Timeout per
 * request for the rest of the process's life. An idle list is safe to drop: its
 * pending Node timer finds nothing when it fires, and a cleared entry refreshed
 * later still runs on it, alone. O(MAX_LISTS), only when a new duration arrives while full.
 */
function dropIdleList(): boolean {
  for (const [ms, list] of lists) {
    if (list.idle) {
      lists.delete(ms);
      return true;
    }
  }
  return false;
}
