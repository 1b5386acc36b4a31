/**
 * The one error configuration loading throws. `problems` holds every problem
 * found (never just the first), each as `path: reason`; `switchyard check`
 * prints them one per line. No problem ever quotes a secret's value.
 */

export class ConfigError extends Error {
  readonly code = 'ERR_SWITCHYARD_CONFIG';
  readonly problems: readonly string[];
  /** The file the configuration came from, when it came from one. */
  readonly source: string | undefined;

  constructor(problems: readonly string[], source?: string) {
    const where = source ? ` in ${source}` : '';
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`Invalid configuration${where} (${count}):\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = Object.freeze([...problems]);
    this.source = source;
  }
}

export function isConfigError(err: unknown): err is ConfigError {
  return err instanceof ConfigError;
}
