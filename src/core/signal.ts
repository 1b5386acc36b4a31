/**
 * Cancellation on the hot path. Every request and every attempt needs an
 * abort signal (client gone, deadline, attempt timeout, stall), and Node's
 * AbortController is the wrong tool for that volume: constructing one builds
 * an EventTarget (maps, symbols, a weak registry), and each listener add or
 * remove goes through the DOM event machinery — together the largest single
 * cost of the gateway core in profiles (BENCHMARKS.md).
 *
 * `Signal` is the part of AbortSignal the gateway uses, so a real AbortSignal
 * (from an embedder, a test) still fits anywhere a Signal is taken;
 * `Cancellation` is a plain object with a listener array that implements it.
 */

export interface Signal {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Every listener is called at most once: a signal aborts at most once. */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
  throwIfAborted(): void;
}

export class Cancellation implements Signal {
  aborted = false;
  reason: unknown = undefined;
  /** Few listeners at a time (an attempt, a wait, an upstream exchange): an array beats a set. */
  private listeners: (() => void)[] | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    // A literal has room for exactly one; `[]` then push reserves seventeen slots.
    if (this.listeners === undefined) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const list = this.listeners;
    if (list === undefined) return;
    const i = list.lastIndexOf(listener);
    if (i === -1) return;
    if (i === list.length - 1) list.pop();
    else list.splice(i, 1);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  /** Abort once with `reason`; listeners run in the order they were added. Later calls do nothing. */
  abort(reason: unknown = new Error('aborted')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const list = this.listeners;
    this.listeners = undefined;
    if (list === undefined) return;
    for (const fn of list) {
      try {
        fn();
      } catch {
        // One broken listener must not keep the others from learning of the abort
        // (an EventTarget would report it as an uncaught exception and crash the process).
      }
    }
  }

  /** Abort with the parent's reason when it aborts (until `unlink` is called). */
  follow(parent: Signal): () => void {
    if (parent.aborted) {
      this.abort(parent.reason);
      return noop;
    }
    const onAbort = () => this.abort(parent.reason);
    parent.addEventListener('abort', onAbort, { once: true });
    return () => parent.removeEventListener('abort', onAbort);
  }
}

const noop = () => {};
