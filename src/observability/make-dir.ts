/**
 * `mkdir -p` that cannot spin. Node's `mkdirSync(dir, { recursive: true })`
 * never returns for a path under /proc (mkdir there answers ENOENT although the
 * parent exists, and node's loop creates the parent and retries for ever), so
 * a trace path mistyped into /proc hung start-up. This walks up to the nearest
 * existing ancestor once, then creates each missing level once, and lets the
 * first refusal through as the error it is.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

export function makeDir(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    const st = statSync(d, { throwIfNoEntry: false });
    if (st) {
      if (!st.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${d}'`), { code: 'ENOTDIR' });
      break;
    }
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    try {
      mkdirSync(missing[i]!);
    } catch (err) {
      // Made meanwhile by another process: fine, as with -p.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
