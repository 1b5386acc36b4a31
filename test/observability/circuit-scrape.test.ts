/**
 * Breakers leave `open` only when a request asks: read over a real socket,
 * /metrics shows an idle circuit whose recovery time has passed as half-open
 * (found by a soak: an idle gateway kept an "open circuit" alert firing).
 */
import { afterEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  gw = undefined;
});

it('an idle open circuit past its recovery time reads half-open at the next scrape', async () => {
  const clock = new VirtualClock();
  gw = await startGateway(
    {
      resilience: { breaker: { failureThreshold: 1, recoveryMs: 30_000 } },
      providers: [{ id: 'sim', type: 'simulated' }],
      models: [{ name: 'm', deployments: [{ provider: 'sim', model: 'x' }] }],
    },
    { clock },
  );
  const circuit = async () => sampleValue(parsePrometheusText(await (await fetch(`${gw!.url}/metrics`)).text()), 'switchyard_circuit_state', { deployment: 'sim/x' });
  gw.gateway.health.failure('sim/x', false); // as an upstream failure would
  expect(await circuit()).toBe(2);
  await clock.advance(29_999);
  expect(await circuit()).toBe(2);
  await clock.advance(1);
  expect(await circuit()).toBe(1); // no request came: the scrape settled it
});
