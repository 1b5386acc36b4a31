/**
 * `switchyard check --config FILE` in-process through main(): exit 0 and `ok`
 * for a good file; exit 1 and one `path: reason` line per problem, every
 * problem at once; exit 2 for bad flags.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { main } from '../../src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'switchyard-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

let log: MockInstance<typeof console.log>;
let err: MockInstance<typeof console.error>;
const lines = (spy: MockInstance<(...a: unknown[]) => void>) => spy.mock.calls.map((c) => c.map(String).join(' '));

beforeEach(() => {
  log = vi.spyOn(console, 'log').mockImplementation(() => {});
  err = vi.spyOn(console, 'error').mockImplementation(() => {});
  // The checks must judge the file alone, whatever this machine's environment says.
  for (const name of ['REDIS_URL', 'PORT', 'HOST', 'SWITCHYARD_CONFIG', 'CHECK_TEST_UNSET_VAR', 'CHECK_TEST_KEY']) vi.stubEnv(name, undefined);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const GOOD = `
providers:
  - id: sim
    type: simulated
models:
  - name: fast
    deployments:
      - provider: sim
        model: m
`;

describe('switchyard check', () => {
  it('exits 0 and says ok for the bundled demo', async () => {
    const demo = resolve('examples/demo.yaml');
    expect(await main(['check', '--config', demo])).toBe(0);
    expect(lines(log)).toEqual([`${demo}: ok`]);
    expect(err).not.toHaveBeenCalled();
  });

  it('warns, and still exits 0, for a hosted provider without an API key (found by the contract audit)', async () => {
    const keyless = `
providers:
  - id: claude
    type: anthropic
  - id: proxy
    type: anthropic
    baseUrl: http://127.0.0.1:9000
models:
  - name: fast
    deployments:
      - provider: claude
        model: m
      - provider: proxy
        model: m
`;
    expect(await main(['check', '--config', file('keyless.yaml', keyless)])).toBe(0);
    // The hosted API is named; a baseUrl of one's own (a proxy) may need no key.
    expect(lines(err)).toEqual([
      "warning: providers[0].apiKey: none for the public anthropic API: every request to 'claude' will be refused (401) and fail over",
    ]);
  });

  it('exits 0 for a minimal valid file, JSON too', async () => {
    expect(await main(['check', '--config', file('good.yaml', GOOD)])).toBe(0);
    const json = file('good.json', JSON.stringify({ providers: [{ id: 'sim', type: 'simulated' }], models: [{ name: 'fast', deployments: [{ provider: 'sim', model: 'm' }] }] }));
    expect(await main(['check', '--config', json])).toBe(0);
    expect(lines(log).every((l) => l.endsWith(': ok'))).toBe(true);
  });

  it('exits 1 and prints every problem as `path: reason`, one a line', async () => {
    const bad = file(
      'bad.yaml',
      `
server:
  host: 127.0.0.1
  colour: blue                   # unknown field
state:
  backend: redis                 # redis without a URL
providers:
  - id: a
    type: simulated
  - id: a                        # duplicate provider id
    type: simulated
  - id: b
    type: openai
    apiKey: sk-literal-secret-123456   # a literal secret
  - id: c
    type: openai
    apiKey: \${CHECK_TEST_UNSET_VAR}    # unset variable
models:
  - name: x
    deployments:
      - provider: nowhere        # unknown provider id
        model: m
    fallbacks: [y]               # x -> y -> x
  - name: y
    deployments:
      - provider: a
        model: m
    fallbacks: [x]
  - name: y                      # duplicate alias
    deployments:
      - provider: a
        model: m2
`,
    );
    expect(await main(['check', '--config', bad])).toBe(1);
    expect(log).not.toHaveBeenCalled();
    const out = lines(err);
    // One line per problem, each `path: reason`.
    for (const l of out) expect(l).toMatch(/^[\w$.[\]-]+: \S.*$/);
    expect(out.some((l) => /^server\.colour: .*unknown/.test(l))).toBe(true);
    expect(out.some((l) => /^state\.redisUrl: .*redis/.test(l))).toBe(true);
    expect(out.some((l) => /^providers\[1\]\.id: .*duplicate/.test(l))).toBe(true);
    expect(out.some((l) => /^providers\[2\]\.apiKey: .*literal/.test(l))).toBe(true);
    expect(out.some((l) => /^providers\[3\]\.apiKey: .*CHECK_TEST_UNSET_VAR/.test(l))).toBe(true);
    expect(out.some((l) => /^models\[0\]\.deployments\[0\]\.provider: .*nowhere/.test(l))).toBe(true);
    expect(out.some((l) => /^models\[\d\]\.fallbacks\[0\]: .*cycle/.test(l))).toBe(true);
    expect(out.some((l) => /^models\[2\]\.name: .*duplicate/.test(l))).toBe(true);
    expect(out.length).toBeGreaterThanOrEqual(8);
    // The literal secret is refused without being quoted back.
    expect(out.join('\n')).not.toContain('sk-literal-secret-123456');
  });

  it('a variable that is set satisfies ${VAR}', async () => {
    vi.stubEnv('CHECK_TEST_KEY', 'sk-from-env');
    const p = file(
      'env.yaml',
      `
providers:
  - id: up
    type: openai
    apiKey: \${CHECK_TEST_KEY}
models:
  - name: fast
    deployments:
      - provider: up
        model: gpt
`,
    );
    expect(await main(['check', '--config', p])).toBe(0);
  });

  it('exits 1 with `file: reason` for a missing file or broken YAML', async () => {
    expect(await main(['check', '--config', join(dir, 'missing.yaml')])).toBe(1);
    expect(lines(err)[0]).toMatch(/missing\.yaml: file not found$/);
    err.mockClear();
    expect(await main(['check', '--config', file('broken.yaml', 'providers: [\n  - id: x\n')])).toBe(1);
    expect(lines(err)[0]).toMatch(/broken\.yaml(:\d+:\d+)?: /);
  });

  it('exits 2 on a bad --port or an unknown command, with the reason', async () => {
    for (const argv of [['check', '--config', 'x.yaml', '--port', 'abc'], ['serve', '--port', '70000'], ['serve', '--port', '-1'], ['frobnicate']]) {
      err.mockClear();
      expect(await main(argv)).toBe(2);
      expect(lines(err).join('\n')).toMatch(/port|command|argument|option/i);
    }
  });

  it('exits 2 on an unknown flag or a flag without its value, naming it, with the usage (found by the docs audit)', async () => {
    for (const [argv, first] of [
      [['check', '--confg', 'x.yaml'], "unknown option '--confg'"],
      [['serve', '-x'], "unknown option '-x'"],
      [['--verbose'], "unknown option '--verbose'"],
      [['check', '--config'], /^Option '-c, --config <value>' argument missing/],
    ] as const) {
      err.mockClear();
      expect(await main([...argv]), argv.join(' ')).toBe(2);
      const out = lines(err).join('\n').split('\n');
      if (typeof first === 'string') expect(out[0]).toBe(first);
      else expect(out[0]).toMatch(first);
      expect(out.slice(1).join('\n')).toContain('Usage:\n  switchyard serve [--config FILE] [--port N] [--host H]');
    }
  });

  it('exits 2 on a bad --host, as on a bad --port: a usage error, not a problem in the file', async () => {
    for (const host of ['http://0.0.0.0', '127.0.0.1:4000', '', ' ']) {
      err.mockClear();
      expect(await main(['check', '--config', 'x.yaml', '--host', host]), JSON.stringify(host)).toBe(2);
      expect(lines(err)[0]).toMatch(/^--host must /);
    }
    // A bracketed IPv6 address is a good one.
    err.mockClear();
    expect(await main(['check', '--config', file('ok.yaml', 'providers: [{ id: sim, type: simulated }]\n'), '--host', '[::1]'])).toBe(0);
  });
});
