/**
 * `switchyard serve [--config FILE] [--port N] [--host H]`,
 * `switchyard check --config FILE` and `switchyard --version`, parsed with
 * node:util's parseArgs.
 */
import { parseArgs } from 'node:util';
import { isListenHost, LISTEN_HOST_REASON } from '../config/loopback.js';

export interface CliArgs {
  command: 'serve' | 'check' | 'help' | 'version';
  config?: string;
  port?: number;
  host?: string;
}

export const USAGE = `Usage:
  switchyard serve [--config FILE] [--port N] [--host H]   run the gateway
  switchyard check [--config FILE]                         validate a config, print every problem
  switchyard --version | -v | version                      print the version
Config: --config, else $SWITCHYARD_CONFIG, else ./switchyard.yaml, else the bundled demo.`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

export function parseCli(argv: string[]): CliArgs {
  const { values, positionals } = parseFlags(argv);
  // A flag beats the command, as in most CLIs: `switchyard serve --version` prints the version.
  const command = values.help ? 'help' : values.version ? 'version' : (positionals[0] ?? 'serve');
  if (command !== 'serve' && command !== 'check' && command !== 'help' && command !== 'version') throw new Error(`unknown command '${command}'\n${USAGE}`);
  if (positionals.length > 1) throw new Error(`unexpected argument '${positionals[1]}'\n${USAGE}`);
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!/^\d+$/.test(values.port) || port > 65535) throw new Error(`--port must be a number from 0 to 65535, got '${values.port}'`);
  }
  // Checked here too, so a bad --host is a usage error (exit 2) like a bad --port, not a config problem.
  if (values.host !== undefined && values.host.trim() === '') throw new Error('--host must not be empty');
  if (values.host !== undefined && !isListenHost(values.host.trim())) throw new Error(`--host ${LISTEN_HOST_REASON}, got '${values.host}'`);
  return { command, config: values.config, port, host: values.host };
}

/**
 * parseArgs' own errors, said like the others, with the usage: its message for an
 * unknown flag (`--confg`) is a paragraph about positionals with an unclosed quote
 * and never lists the flags there are.
 */
function parseFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const flag = /'([^']*)'/.exec((err as Error).message)?.[1] ?? '';
      throw new Error(`unknown option '${flag}'\n${USAGE}`);
    }
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) throw new Error(`${(err as Error).message}\n${USAGE}`);
    throw err;
  }
}
