/**
 * The YAML examples in the README and docs/ are what users copy: each must be
 * valid YAML, and each that is a whole config (it lists providers) must pass
 * the same checks as `switchyard check`, with its ${VAR}s set. A fragment (one
 * section, or a list of providers) must pass them too once put in a config
 * that has what it refers to; the "Everything, with defaults" block must be
 * the defaults; and every field the schema takes must be named in
 * docs/configuration.md.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import type * as z from 'zod';
import { parseConfig } from '../../src/config/parse.js';
import { ConfigSchema } from '../../src/config/schema.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Each ${VAR} in the text, set, so a snippet's secrets count as given. */
const envFor = (text: string) =>
  Object.fromEntries([...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => [m[1]!, `value-of-${m[1]}-0123456789`]));

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

/** What a fragment may refer to: the provider `openai` and the aliases the docs' snippets name. */
const BASE_PROVIDERS = [{ id: 'openai', type: 'openai', apiKey: '${OPENAI_API_KEY}' }];
const BASE_MODELS = ['fast', 'smart', 'frontier'].map((name) => ({ name, deployments: [{ provider: 'openai', model: `base-${name}` }] }));

/** The fragment's sections over a base config: its providers and aliases added (replacing any of the same id or name). */
function withBase(fragment: Record<string, unknown>): Record<string, unknown> {
  const doc: Record<string, unknown> = { providers: BASE_PROVIDERS, models: BASE_MODELS };
  for (const [section, value] of Object.entries(fragment)) {
    if (section === 'providers' && Array.isArray(value)) {
      const ids = new Set(value.map((p: { id?: unknown }) => p.id));
      doc.providers = [...BASE_PROVIDERS.filter((p) => !ids.has(p.id)), ...value];
    } else if (section === 'models' && Array.isArray(value)) {
      const names = new Set(value.map((m: { name?: unknown }) => m.name));
      doc.models = [...value, ...BASE_MODELS.filter((m) => !names.has(m.name))];
    } else doc[section] = value;
  }
  return doc;
}

describe('YAML fragments in docs/ (one section, or list items of providers)', () => {
  const fragments = blocks.flatMap((b) => {
    const js = parseDocument(b.text, { merge: true, schema: 'core' }).toJS() as unknown;
    // A list on its own is a list of providers (the `simulate` example).
    const doc = Array.isArray(js) ? { providers: js } : (js as Record<string, unknown> | null);
    if (doc === null || typeof doc !== 'object') return [];
    if (Array.isArray(doc.providers) && doc.providers.length > 0 && !Array.isArray(js)) return [];
    return [{ ...b, doc }];
  });

  it('there are some', () => {
    expect(fragments.length).toBeGreaterThanOrEqual(5);
  });

  it.each(fragments)('$name passes check inside a config that has what it names', ({ text, doc }) => {
    const env = envFor(text + JSON.stringify(BASE_PROVIDERS));
    expect(() => parseConfig(withBase(doc), env)).not.toThrow();
  });
});

describe('docs/configuration.md against the schema', () => {
  const text = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');

  it('"Everything, with defaults" is what an empty config gets', () => {
    const section = text.split('## Everything, with defaults')[1] ?? '';
    const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBeDefined();
    const everything = parseDocument(block!, { schema: 'core' }).toJS() as Record<string, unknown>;
    const providers = [{ id: 'sim', type: 'simulated' }];
    const documented = parseConfig({ ...everything, providers }, {});
    const actual = parseConfig({ providers }, {});
    expect(documented).toEqual(actual);
    // Every section is spelled out, so none can be left out of the list unnoticed.
    expect(Object.keys(everything).sort()).toEqual(Object.keys(ConfigSchema.shape).filter((k) => k !== 'auto').sort());
  });

  /** Every field path the schema takes, as `server.port`, `providers[].simulate.faults[].kind`. */
  function fieldPaths(schema: z.core.$ZodType, path: string, out: string[]): string[] {
    const def = schema._zod.def as unknown as { type: string; shape?: Record<string, z.core.$ZodType>; element?: z.core.$ZodType; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
    if (def.type === 'object') {
      for (const [k, v] of Object.entries(def.shape!)) {
        const p = path ? `${path}.${k}` : k;
        out.push(p);
        fieldPaths(v, p, out);
      }
    } else if (def.type === 'array') fieldPaths(def.element!, `${path}[]`, out);
    else if (def.innerType) fieldPaths(def.innerType, path, out);
    else if (def.type === 'pipe') fieldPaths(def.in!, path, out);
    return out;
  }

  const paths = fieldPaths(ConfigSchema, '', []);

  it('walks the whole schema', () => {
    expect(paths).toContain('providers[].simulate.faults[].afterChunks');
    expect(paths).toContain('models[].deployments[].ttftTimeoutMs');
    expect(paths.length).toBeGreaterThan(90);
  });

  it.each(paths)('%s is documented', (path) => {
    const name = path.slice(path.lastIndexOf('.') + 1).replace('[]', '');
    // Named in code style (`name`, `parent.name`, `a` / `b` rows), or as a key in a YAML example.
    const named = new RegExp(`\`(?:[\\w.\\[\\]]*\\.)?${name}\`|^\\s*(?:- )?${name}:|[{,] ${name}:`, 'm');
    expect(text).toMatch(named);
  });
});
