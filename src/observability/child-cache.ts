/**
 * Memoised `metric.labels(...)` children keyed by nested Maps: one Map lookup
 * per label per event, no label-string concatenation, and prom-client's
 * label validation runs once per series instead of once per event. Safe only
 * because every key comes from a bounded set (see metric-labels.ts).
 */
type Key = string | number;

export function cache1<A extends Key, C>(make: (a: A) => C): (a: A) => C {
  const m = new Map<A, C>();
  return (a) => {
    let c = m.get(a);
    if (c === undefined) m.set(a, (c = make(a)));
    return c;
  };
}

export function cache2<A extends Key, B extends Key, C>(make: (a: A, b: B) => C): (a: A, b: B) => C {
  const outer = new Map<A, Map<B, C>>();
  return (a, b) => {
    let inner = outer.get(a);
    if (inner === undefined) outer.set(a, (inner = new Map()));
    let c = inner.get(b);
    if (c === undefined) inner.set(b, (c = make(a, b)));
    return c;
  };
}

export function cache3<A extends Key, B extends Key, D extends Key, C>(
  make: (a: A, b: B, d: D) => C,
): (a: A, b: B, d: D) => C {
  const outer = new Map<A, (b: B, d: D) => C>();
  return (a, b, d) => {
    let inner = outer.get(a);
    if (inner === undefined) outer.set(a, (inner = cache2((b2: B, d2: D) => make(a, b2, d2))));
    return inner(b, d);
  };
}
