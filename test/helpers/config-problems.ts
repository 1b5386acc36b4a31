import { ConfigError } from '../../src/config/errors.js';

/** The `path: reason` lines `load` refuses a config with; none when it loads. Any other throw is the test's failure. */
export function configProblems(load: () => unknown): readonly string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}
