/**
 * `npm start` and `npx switchyard serve` run the gateway under `sh -c`, and npm
 * hands a SIGTERM (a container stopping, a supervisor, a test harness) to that
 * shell only. dash, the usual /bin/sh, dies of it without passing it on, so the
 * gateway ran on, orphaned, its port still bound, with nothing left to stop it.
 * Under npm, the parent going away is that signal arriving late: `onGone` runs.
 *
 * Only under npm (it sets `npm_lifecycle_event`): a gateway started as
 * `nohup node bin/switchyard.js serve &` from a shell that then exits is
 * re-parented too, and must keep serving.
 */
export const PARENT_POLL_MS = 250;

/** Starts watching; returns the function that stops it. The timer never holds the process open. */
export function watchParent(onGone: () => void, env: NodeJS.ProcessEnv = process.env): () => void {
  if (env.npm_lifecycle_event === undefined) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, PARENT_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
