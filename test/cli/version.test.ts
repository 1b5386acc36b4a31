/**
 * `switchyard --version`, `-v` and `switchyard version` in-process through main():
 * the version package.json says, alone on stdout, exit 0. The real process, from the
 * checkout and from an installed package, is in serve.test.ts (which builds dist/).
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { main } from '../../src/cli/main.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

let log: MockInstance<typeof console.log>;
let err: MockInstance<typeof console.error>;

beforeEach(() => {
  log = vi.spyOn(console, 'log').mockImplementation(() => {});
  err = vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => vi.restoreAllMocks());

describe('switchyard --version', () => {
  it.each([[['--version']], [['-v']], [['version']], [['serve', '--version']], [['check', '--config', 'missing.yaml', '-v']]])(
    '%j prints the package version and exits 0, reading no config',
    async (argv) => {
      expect(VERSION).toMatch(/^\d+\.\d+\.\d+/);
      expect(await main(argv)).toBe(0);
      expect(log.mock.calls).toEqual([[VERSION]]);
      expect(err).not.toHaveBeenCalled();
    },
  );

  it('is in the usage', async () => {
    expect(await main(['--help'])).toBe(0);
    expect(String(log.mock.calls[0]![0])).toMatch(/^ {2}switchyard --version \| -v \| version +print the version$/m);
  });

  it('takes no argument: `switchyard version 2` is a usage error', async () => {
    expect(await main(['version', '2'])).toBe(2);
    expect(String(err.mock.calls[0]![0])).toMatch(/^unexpected argument '2'/);
  });
});
