import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './errors.js';
import { configProblems } from '../../test/helpers/config-problems.js';
import { DEMO_CONFIG_PATH, loadConfig, resolveConfigPath } from './load.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchyard-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const YAML = `
providers:
  - id: openai
    type: openai
    apiKey: \${OPENAI_API_KEY}
  - { id: sim, type: simulated }
models:
  - name: fast
    deployments:
      - { provider: openai, model: gpt-4o-mini }
server:
  port: \${PORT_FROM_FILE:-4100}
`;

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const problemsOf = configProblems;

describe('loadConfig', () => {
  it('reads YAML, interpolating from the given env', () => {
    const file = write('gw.yaml', YAML);
    const { config, source, origin } = loadConfig({ path: file, env: { OPENAI_API_KEY: 'sk-1' }, cwd: dir });
    expect(source).toBe(file);
    expect(origin).toBe('path');
    expect(config.providers[0].apiKey).toBe('sk-1');
    expect(config.server.port).toBe(4100);
    expect(config.models[0].deployments[0]).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
  });

  it('supports YAML anchors and merge keys', () => {
    const file = write(
      'anchors.yaml',
      `providers: [{ id: sim, type: simulated }]
models:
  - name: a
    deployments:
      - &d { provider: sim, model: m1, weight: 2, capabilities: [tools] }
      - { <<: *d, model: m2 }
`,
    );
    const { config } = loadConfig({ path: file, env: {}, cwd: dir });
    expect(config.models[0].deployments[1]).toEqual({ provider: 'sim', model: 'm2', weight: 2, capabilities: ['tools'] });
  });

  it('reads JSON', () => {
    const file = write(
      'gw.json',
      JSON.stringify({ providers: [{ id: 'sim', type: 'simulated' }], server: { port: '${P:-4200}' } }, null, 2),
    );
    expect(loadConfig({ path: file, env: {}, cwd: dir }).config.server.port).toBe(4200);
  });

  it('reports a JSON syntax error with file, line and column', () => {
    write('bad.json', '{\n  "providers": [],\n  "server": { "port": 1, }\n}\n');
    expect(problemsOf(() => loadConfig({ path: 'bad.json', env: {}, cwd: dir }))).toEqual([
      'bad.json:3:26: invalid JSON: Expected double-quoted property name',
    ]);
  });

  it('never quotes the source of a JSON syntax error, however long (it may hold a secret)', () => {
    write('cut.json', '{"providers": [{"id": "a", "type": "openai", "apiKey": "sk-live-SECRET123"},]}');
    write('short.json', '{"a": ["SECRET",]}');
    expect(problemsOf(() => loadConfig({ path: 'cut.json', env: {}, cwd: dir }))).toEqual(["cut.json:1:77: invalid JSON: Unexpected token ']'"]);
    expect(problemsOf(() => loadConfig({ path: 'short.json', env: {}, cwd: dir }))).toEqual(["short.json:1:17: invalid JSON: Unexpected token ']'"]);
  });

  // V8 names no position for these, and the YAML parser, which takes a trailing comma and `tru`, none either.
  it('says where a JSON syntax error is that V8 does not place, still without the source', () => {
    const cases: Array<[string, string, string]> = [
      ['comma.json', '{\n  "providers": [\n    { "id": "a", "type": "openai", "apiKey": "sk-live-SECRET123" },\n  ]\n}\n', "comma.json:4:3: invalid JSON: Unexpected token ']'"],
      ['literal.json', '{\n  "server": {\n    "tls": tru\n  },\n  "apiKey": "sk-live-SECRET123"\n}\n', "literal.json:3:12: invalid JSON: Unexpected token '\\n'"],
      ['cut-short.json', '{\n  "providers": [\n    ', 'cut-short.json:3:5: invalid JSON: Unexpected end of JSON input'],
      ['tab.json', '{"apiKey": "sk-live-SECRET123", "on": tr\t}', "tab.json:1:39: invalid JSON: Unexpected token '\\t'"],
      ['crlf.json', '{\r\n  "a": ["sk-live-SECRET123",\r\n  ]}', "crlf.json:3:3: invalid JSON: Unexpected token ']'"],
    ];
    for (const [name, text, problem] of cases) {
      write(name, text);
      const problems = problemsOf(() => loadConfig({ path: name, env: {}, cwd: dir }));
      expect(problems).toEqual([problem]);
      expect(problems.join('\n')).not.toMatch(/SECRET|sk-live/);
    }
  });

  it('reports a YAML error with file and line, without quoting the source', () => {
    write('dup.yaml', 'providers: []\nserver:\n  port: 1\n  port: 2\n');
    expect(problemsOf(() => loadConfig({ path: 'dup.yaml', env: {}, cwd: dir }))).toEqual([
      'dup.yaml:4:3: Map keys must be unique',
    ]);
    write('flow.yaml', 'server: { port: 1\nproviders: []\n');
    const [p] = problemsOf(() => loadConfig({ path: 'flow.yaml', env: {}, cwd: dir }));
    expect(p).toMatch(/^flow\.yaml:\d+:\d+: /);
    expect(p).not.toContain('\n');
  });

  it('refuses bytes that are not UTF-8, saying where, rather than reading them as U+FFFD (found by the config fuzz)', () => {
    const file = join(dir, 'latin1.yaml');
    writeFileSync(file, Buffer.from('providers: [{ id: sim, type: simulated }]\nmodels:\n  - { name: caf\xe9, deployments: [{ provider: sim, model: m }] }\n', 'latin1'));
    expect(problemsOf(() => loadConfig({ path: 'latin1.yaml', env: {}, cwd: dir }))).toEqual([
      'latin1.yaml:3:16: not valid UTF-8 (save the file as UTF-8)',
    ]);
    // The column counts characters, as the YAML parser's do: 日本 is two columns, not six bytes.
    writeFileSync(join(dir, 'wide.yaml'), Buffer.concat([Buffer.from('models:\n  - { name: "日本", x: caf'), Buffer.from([0xe9]), Buffer.from(' }\n')]));
    expect(problemsOf(() => loadConfig({ path: 'wide.yaml', env: {}, cwd: dir }))).toEqual(['wide.yaml:2:25: not valid UTF-8 (save the file as UTF-8)']);
    // A byte-order mark and real UTF-8 are fine.
    write('bom.yaml', '\uFEFFproviders: [{ id: sim, type: simulated }]\nmodels:\n  - { name: café, deployments: [{ provider: sim, model: m }] }\n');
    expect(loadConfig({ path: 'bom.yaml', env: {}, cwd: dir }).config.models[0].name).toBe('café');
  });

  it('refuses YAML 1.1 tags instead of reading !!omap or !!set as an empty section (found by the config fuzz)', () => {
    // !!omap became a Map, which the schema took for an empty `server`: port 1 became 4000.
    write('omap.yaml', 'providers: [{ id: sim, type: simulated }]\nserver: !!omap [ { port: 1 } ]\n');
    expect(problemsOf(() => loadConfig({ path: 'omap.yaml', env: {}, cwd: dir }))).toEqual([
      'omap.yaml:2:9: unsupported tag !!omap: write a plain value, list or mapping',
    ]);
    write('set.yaml', 'providers: [{ id: sim, type: simulated }]\nserver: !!set { port }\nkeys: !custom []\n');
    expect(problemsOf(() => loadConfig({ path: 'set.yaml', env: {}, cwd: dir }))).toEqual([
      'set.yaml:2:9: unsupported tag !!set: write a plain value, list or mapping',
      'set.yaml:3:7: unsupported tag !custom: write a plain value, list or mapping',
    ]);
  });

  it('reads a file that declares %YAML 1.1 as YAML 1.2 too: its tags are refused, yes stays text', () => {
    // The directive switched the parser to its 1.1 schema, where !!omap is known: port 1 became 4000 again.
    write('v11.yaml', '%YAML 1.1\n---\nproviders: [{ id: sim, type: simulated }]\nserver: !!omap [ { port: 1 } ]\n');
    expect(problemsOf(() => loadConfig({ path: 'v11.yaml', env: {}, cwd: dir }))).toEqual([
      'v11.yaml:4:9: unsupported tag !!omap: write a plain value, list or mapping',
    ]);
    // 1.1's implicit types (yes → true, 2001-12-14 → a Date) are not applied either; merge keys still are.
    const v11 = '%YAML 1.1\n---\nproviders: [&p { id: a, type: simulated }, { <<: *p, id: b }]\nmodels: [{ name: m, deployments: [{ provider: b, model: 2001-12-14 }] }]\n';
    write('v11b.yaml', v11);
    const { config } = loadConfig({ path: 'v11b.yaml', env: {}, cwd: dir });
    expect(config.providers.map((p) => [p.id, p.type])).toEqual([['a', 'simulated'], ['b', 'simulated']]);
    expect(config.models[0].deployments[0].model).toBe('2001-12-14');
    write('v11c.yaml', `${v11}resilience: { streamResume: yes }\n`);
    expect(problemsOf(() => loadConfig({ path: 'v11c.yaml', env: {}, cwd: dir }))).toEqual(['resilience.streamResume: expected boolean, got a string']);
  });

  it('says a second YAML document is not read, in words for the user (found by the config fuzz)', () => {
    write('two.yaml', 'providers: [{ id: sim, type: simulated }]\n---\nserver: { port: 5 }\n');
    expect(problemsOf(() => loadConfig({ path: 'two.yaml', env: {}, cwd: dir }))).toEqual([
      'two.yaml:2:1: more than one YAML document (a second ---): a config file holds one',
    ]);
  });

  it('refuses a JSON object with the same key twice, which JSON.parse would settle silently (found by the config fuzz)', () => {
    write('dup.json', '{\n  "providers": [{ "id": "sim", "type": "simulated" }],\n  "server": { "port": 1, "port": 2 }\n}\n');
    expect(problemsOf(() => loadConfig({ path: 'dup.json', env: {}, cwd: dir }))).toEqual([
      'dup.json:3:26: duplicate key (the same key twice in one object)',
    ]);
  });

  it('reports a document nested thousands deep as a problem, not a stack overflow (found by the config fuzz)', () => {
    write('deep.json', `{"providers":[{"id":"sim","type":"simulated"}],"server":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    const [deep, ...rest] = problemsOf(() => loadConfig({ path: 'deep.json', env: {}, cwd: dir }));
    expect(deep).toMatch(/^server(\[0\]){31}: nested more than 32 levels deep$/);
    expect(rest).toEqual(['server: expected object, got a list']);
    // YAML that deep stops the YAML parser itself: said as the nesting, not as its stack.
    write('deep.yaml', `providers: [{ id: sim, type: simulated }]\nserver: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
    expect(problemsOf(() => loadConfig({ path: 'deep.yaml', env: {}, cwd: dir }))).toEqual([
      expect.stringMatching(/^deep\.yaml:2:\d+: nested too deep \(more than 32 levels\)$/),
    ]);
  });

  it('reports a missing or empty file', () => {
    expect(problemsOf(() => loadConfig({ path: 'nope.yaml', env: {}, cwd: dir }))).toEqual(['nope.yaml: file not found']);
    write('empty.yaml', '# nothing\n');
    expect(problemsOf(() => loadConfig({ path: 'empty.yaml', env: {}, cwd: dir }))).toEqual(['empty.yaml: the file is empty']);
  });

  it('names the file in the error and lists schema problems', () => {
    write('gw.yaml', 'providers: [{ id: sim, type: simulated, colour: red }]\n');
    let error: unknown;
    try {
      loadConfig({ path: 'gw.yaml', env: {}, cwd: dir });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual(['providers[0].colour: unknown field']);
    expect((error as ConfigError).source).toBe('gw.yaml');
  });

  it('applies env and CLI overrides', () => {
    const file = write('gw.yaml', 'providers: [{ id: sim, type: simulated }]\nserver: { port: 1000 }\n');
    const { config } = loadConfig({ path: file, env: { PORT: '2000', MAX_RETRIES: '7' }, overrides: { port: 3000 } });
    expect(config.server.port).toBe(3000);
    expect(config.resilience.maxRetries).toBe(7);
    expect(Object.isFrozen(config.resilience)).toBe(true);
  });
});

describe('resolveConfigPath: --config, then SWITCHYARD_CONFIG, then ./switchyard.yaml, then the demo', () => {
  it('follows the contract order', () => {
    const env = { SWITCHYARD_CONFIG: 'from-env.yaml' };
    expect(resolveConfigPath('explicit.yaml', env, dir)).toEqual({ file: join(dir, 'explicit.yaml'), origin: 'path' });
    write('switchyard.yaml', 'providers: []\n');
    expect(resolveConfigPath(undefined, env, dir)).toEqual({ file: join(dir, 'from-env.yaml'), origin: 'env' });
    expect(resolveConfigPath(undefined, {}, dir)).toEqual({ file: join(dir, 'switchyard.yaml'), origin: 'cwd' });
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    expect(resolveConfigPath(undefined, { SWITCHYARD_CONFIG: '' }, empty)).toEqual({ file: DEMO_CONFIG_PATH, origin: 'demo' });
  });

  it('points the demo at examples/demo.yaml under the package root', () => {
    expect(DEMO_CONFIG_PATH).toBe(join(import.meta.dirname, '..', '..', 'examples', 'demo.yaml'));
  });

  it.runIf(existsSync(DEMO_CONFIG_PATH))('the bundled demo config is valid with an empty environment', () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const { config, origin } = loadConfig({ env: {}, cwd: empty });
    expect(origin).toBe('demo');
    expect(config.providers.length).toBeGreaterThan(0);
  });
});
