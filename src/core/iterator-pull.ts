/**
 * Any async iterator read pull-style (see stream-reader.ts): `pull` returns
 * the settled result of the one `next()` in flight, or starts it and returns
 * undefined; `ready` resolves (never rejects) when it has settled.
 */
export const PULL_END: unique symbol = Symbol('switchyard.pullEnd');

export class IteratorPull<T> {
  private call: Promise<void> | undefined;
  private result: { value: T } | { end: true } | { error: unknown } | undefined;

  constructor(readonly iterator: AsyncIterator<T>) {}

  /** The next value, PULL_END when the iterator is done, or undefined: await `ready`. Throws what `next()` threw. */
  pull(): T | typeof PULL_END | undefined {
    const r = this.result;
    if (r !== undefined) {
      this.result = undefined;
      if ('error' in r) throw r.error;
      return 'end' in r ? PULL_END : r.value;
    }
    this.call ??= this.iterator.next().then(
      (x) => {
        this.call = undefined;
        this.result = x.done ? { end: true } : { value: x.value };
      },
      (error: unknown) => {
        this.call = undefined;
        this.result = { error };
      },
    );
    return undefined;
  }

  ready(): Promise<void> {
    return this.call ?? Promise.resolve();
  }

  /** A `next()` still running, which a caller finishing the iterator must let settle first. */
  get inFlight(): Promise<void> | undefined {
    return this.call;
  }
}
