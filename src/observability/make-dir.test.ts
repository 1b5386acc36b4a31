import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeDir } from './make-dir.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('creates every missing level and accepts one that exists', () => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-mkdir-'));
  const deep = join(dir, 'a', 'b', 'c');
  makeDir(deep);
  expect(statSync(deep).isDirectory()).toBe(true);
  makeDir(deep);
  makeDir(dir);
});

it('refuses a path through a file', () => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-mkdir-'));
  writeFileSync(join(dir, 'f'), '');
  expect(() => makeDir(join(dir, 'f', 'x'))).toThrow(/ENOTDIR/);
});

// node's own recursive mkdirSync never returns here (the test would time out).
it.runIf(process.platform === 'linux')('fails at once under /proc, where mkdir answers ENOENT beside an existing parent', () => {
  expect(() => makeDir('/proc/switchyard-no-such/traces')).toThrow(/ENOENT/);
});
