/**
 * Small integer codes for the strings trace records repeat (model, provider,
 * deployment, key id, error code…): the columnar trace ring stores a code
 * instead of keeping a reference to a string per record. Code 0 is null.
 * Bounded: once `max` distinct strings are known, unknown ones get no code
 * (the caller keeps that record some other way), so clients cannot grow it.
 * Codes are never taken back: the store rebuilds a fresh table from the
 * strings its records still use (MemoryTraceStore.compact).
 */
export class Interner {
  private readonly codes = new Map<string, number>();
  private readonly strings: (string | null)[] = [null];

  constructor(readonly max = 4096) {}

  /** No room for another string. */
  get full(): boolean {
    return this.strings.length > this.max;
  }

  /** The code of `s` (null → 0), or -1 when `s` is new and the table is full. */
  code(s: string | null): number {
    if (s === null) return 0;
    let c = this.codes.get(s);
    if (c !== undefined) return c;
    if (this.strings.length > this.max) return -1;
    c = this.strings.length;
    this.strings.push(s);
    this.codes.set(s, c);
    return c;
  }

  /** The code of a known string, or -1 (for filters: an unknown string matches nothing). */
  find(s: string): number {
    return this.codes.get(s) ?? -1;
  }

  string(code: number): string | null {
    return this.strings[code] ?? null;
  }
}
