/**
 * The YAML examples in the README and docs/ are what users copy: each must be
 * valid YAML, and each that is a whole config (it lists providers) must pass
 * the same checks as `switchyard check`, with its ${VAR}s set.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { parseConfig } from '../../src/config/parse.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

const blocks = FILES.flatMap((file) =>
  [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)].map((m, i) => ({ name: `${file} yaml block ${i + 1}`, text: m[1]! })),
);

describe('YAML examples in README.md and docs/', () => {
  it('there are some', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
  });

  it.each(blocks)('$name is valid YAML', ({ text }) => {
    const doc = parseDocument(text, { merge: true, schema: 'core' });
    expect(doc.errors.map((e) => e.message.split('\n')[0])).toEqual([]);
  });

  it.each(blocks)('$name, if a whole config, passes check', ({ text }) => {
    const doc = parseDocument(text, { merge: true, schema: 'core' }).toJS() as { providers?: unknown[] } | null;
    if (!Array.isArray(doc?.providers) || doc.providers.length === 0) return;
    const env = Object.fromEntries([...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => [m[1]!, `value-of-${m[1]}-0123456789`]));
    expect(() => parseConfig(doc, env)).not.toThrow();
  });
});
