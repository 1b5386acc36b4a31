/**
 * An adapter bug meeting odd input is not an upstream failure: it must not be
 * retried, fail over, or count against the deployment's breaker — one bad
 * request must never make an alias unavailable for everyone else.
 */
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { createGateway } from '../../src/core/gateway.js';
import { GatewayError } from '../../src/core/errors.js';
import { createSimulatedAdapter } from '../../src/providers/simulated/index.js';
import type { AdapterFactory } from '../../src/providers/types.js';

// A URIError too: decodeURIComponent on a client's data URL threw one, and one request opened a Gemini breaker (found by fuzzing).
it.each([
  ['TypeError', () => new TypeError("Cannot read properties of undefined (reading 'name')")],
  ['URIError', () => new URIError('URI malformed')],
])('a %s in an adapter is a 500 for that request only; the breaker stays closed', async (_name, bug) => {
  let calls = 0;
  const buggy: AdapterFactory = (provider, deps) => {
    const real = createSimulatedAdapter(provider, deps);
    return Object.assign(Object.create(real) as typeof real, {
      chat: (req: Parameters<typeof real.chat>[0], ctx: Parameters<typeof real.chat>[1]) => {
        calls++;
        if (req.messages[0]!.content === 'poison') return Promise.reject(bug());
        return real.chat(req, ctx);
      },
    });
  };
  const config = parseConfig({
    resilience: { breaker: { failureThreshold: 2 } },
    providers: [
      { id: 'a', type: 'simulated', simulate: { latencyMs: 0 } },
      { id: 'b', type: 'simulated', simulate: { latencyMs: 0 } },
    ],
    models: [{ name: 'm', deployments: [{ provider: 'a', model: 'x' }], fallbacks: ['n'] }, { name: 'n', deployments: [{ provider: 'b', model: 'y' }] }],
  }, {});
  const gw = createGateway(config, { adapters: { simulated: buggy } });
  for (let i = 0; i < 5; i++) {
    const err = await gw.chat({ model: 'm', messages: [{ role: 'user', content: 'poison' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(500);
    expect((err as GatewayError).code).toBe('internal_error');
  }
  expect(calls).toBe(5); // no retries, no fail-over to the same bug elsewhere
  expect(gw.health.state('a/x')).toBe('closed');
  const ok = await gw.chat({ model: 'm', messages: [{ role: 'user', content: 'fine' }] });
  expect(!ok.stream && ok.meta.deployment).toBe('a/x');
  await gw.close();
});
