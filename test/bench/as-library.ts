/**
 * loadgen.ts and mock-upstream.ts serve over IPC when `process.send` is set
 * (run.ts forks them), and a vitest fork has an IPC channel of its own: they
 * would answer vitest's messages and exit when it disconnects. Imported
 * through this, they load as plain modules.
 */
export async function asLibrary<T>(load: () => Promise<T>): Promise<T> {
  const send = process.send;
  process.send = undefined;
  try {
    return await load();
  } finally {
    process.send = send;
  }
}
