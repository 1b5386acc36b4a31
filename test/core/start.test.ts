/**
 * `state.backend: redis` is accepted (so configs written for shared state load),
 * but shared state is not built yet: start-up must say so, not pretend.
 */
import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { startSwitchyard } from '../../src/core/start.js';
import { createLogger } from '../../src/observability/logger.js';

it('warns that the redis state backend is not implemented, and readiness names the real backend', async () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const config = parseConfig(
    { state: { backend: 'redis', redisUrl: 'redis://127.0.0.1:6379' }, providers: [{ id: 'p', type: 'simulated' }] },
    {},
  );
  const running = await startSwitchyard(config, { port: 0, host: '127.0.0.1', observability: { logger: createLogger({ destination: sink }) } });
  try {
    expect(lines.some((l) => l.includes('"backend":"redis"') && l.includes('not implemented'))).toBe(true);
    const ready = (await (await fetch(`${running.url}/readyz`)).json()) as { state: string };
    expect(ready.state).toBe('memory');
  } finally {
    await running.close(0);
  }
});
