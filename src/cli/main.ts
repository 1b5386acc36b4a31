/**
 * The `switchyard` command. Returns an exit code (the bin sets it); `serve`
 * resolves only after a graceful shutdown.
 */
import { loadConfig } from '../config/load.js';
import { isConfigError } from '../config/errors.js';
import { configWarnings } from '../config/warnings.js';
import { startSwitchyard } from '../core/start.js';
import { createLogger, flushLogger } from '../observability/logger.js';
import { parseCli, USAGE } from './args.js';
import { tuneHeap } from './heap-tuning.js';
import { watchParent } from './parent-watch.js';
import { packageVersion } from './version.js';

export async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseCli(argv);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  if (args.command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (args.command === 'version') {
    console.log(packageVersion());
    return 0;
  }
  let loaded;
  try {
    loaded = loadConfig({ path: args.config, overrides: { port: args.port, host: args.host } });
  } catch (err) {
    if (!isConfigError(err)) throw err;
    for (const p of err.problems) console.error(p);
    return 1;
  }
  if (args.command === 'check') {
    for (const w of configWarnings(loaded.config)) console.error(`warning: ${w}`);
    console.log(`${loaded.source}: ok`);
    return 0;
  }
  return serve(loaded.config, loaded.source, loaded.origin);
}

async function serve(config: Parameters<typeof startSwitchyard>[0], source: string, origin: string): Promise<number> {
  tuneHeap();
  const logger = createLogger();
  logger.info({ event: 'config', source, origin }, origin === 'demo' ? `using the bundled demo config ${source}` : `using config ${source}`);
  const running = await startSwitchyard(config, { observability: { logger, processMetrics: true } });
  logger.info({ event: 'listening', url: running.listenUrl, address: running.url }, `switchyard listening on ${running.listenUrl}`);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals | 'parent-exited') => {
      if (stopping) {
        // A second signal: stop waiting for in-flight requests.
        logger.warn({ event: 'shutdown', signal }, 'second signal: closing in-flight connections now');
        running.server.server.closeAllConnections();
        return;
      }
      stopping = true;
      logger.info({ event: 'shutdown', signal, inFlight: running.server.inFlight }, 'shutting down: draining in-flight requests');
      running.close(config.server.shutdownGraceMs).then(done, (err: unknown) => {
        logger.error({ event: 'shutdown', err: err instanceof Error ? err.message : String(err) }, 'error while shutting down');
        done();
      });
    };
    // Under npm the shell between it and us takes npm's SIGTERM and dies of it:
    // our parent leaving is then the first signal (after a real one it changes nothing).
    const unwatch = watchParent(() => {
      if (!stopping) stop('parent-exited');
    });
    const done = () => {
      unwatch();
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  logger.info({ event: 'stopped' }, 'stopped');
  await flushLogger(logger);
  return 0;
}
