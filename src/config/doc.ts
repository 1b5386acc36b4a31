/**
 * Lenient readers for a document that may not have passed the schema yet: the
 * cross-checks run on it regardless, so every problem is reported in one pass,
 * and they read only what has the right type (the schema reports the rest).
 */

export type Obj = Record<string, unknown>;

export function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
}

export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** A non-empty string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Sets `path` in a plain-object document, creating missing objects; skips when a step has the wrong type. */
export function setIn(root: unknown, path: readonly (string | number)[], value: unknown): void {
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const container = node as Record<string | number, unknown>;
    if (node === null || typeof node !== 'object') return;
    if (container[path[i]] === undefined) container[path[i]] = typeof path[i + 1] === 'number' ? [] : {};
    node = container[path[i]];
  }
  if (node !== null && typeof node === 'object') (node as Record<string | number, unknown>)[path[path.length - 1]] = value;
}
