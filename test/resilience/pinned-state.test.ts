/**
 * Clients choose `PROVIDER/MODEL` strings: whatever they invent, the gateway's
 * per-deployment state (breakers, cooldowns, pacing) must not grow with them.
 */
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { createGateway } from '../../src/core/gateway.js';

it('a thousand invented pinned models share one state entry per provider', async () => {
  const config = parseConfig({
    providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0 } }],
    models: [{ name: 'm', deployments: [{ provider: 'sim', model: 'configured' }] }],
  }, {});
  const gw = createGateway(config);
  await gw.chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  for (let i = 0; i < 1000; i++) {
    const res = await gw.chat({ model: `sim/invented-${i}`, messages: [{ role: 'user', content: 'hi' }] });
    if (res.stream) throw new Error('unexpected stream');
    expect(res.body.model).toBe(`invented-${i}`);
    expect(res.meta.deployment).toBe(`sim/invented-${i}`);
  }
  expect(gw.health.size).toBe(2); // sim/configured and sim/~pinned
  await gw.close();
});
