/**
 * Clients choose `PROVIDER/MODEL` strings: whatever they invent, the gateway's
 * per-deployment state (breakers, cooldowns, pacing) must not grow with them;
 * and within that bound one pinned model's trouble is not another's (a 429 on
 * `openai/gpt-4o` must not cool `openai/o3-mini` down — found by an audit),
 * for models that answered: a client's junk names take no place (found by review).
 */
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { createGateway } from '../../src/core/gateway.js';
import { GatewayError } from '../../src/core/errors.js';
import { Catalog } from '../../src/routing/catalog.js';

const config = () =>
  parseConfig({
    providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0 } }],
    models: [{ name: 'm', deployments: [{ provider: 'sim', model: 'configured' }] }],
  }, {});
const ask = (model: string) => ({ model, messages: [{ role: 'user' as const, content: 'hi' }] });

it('a thousand invented pinned models take at most 32 states of their own and one shared, per provider', async () => {
  const gw = createGateway(config());
  await gw.chat(ask('m'));
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 1000; i++) {
      const res = await gw.chat(ask(`sim/invented-${i}`));
      if (res.stream) throw new Error('unexpected stream');
      expect(res.body.model).toBe(`invented-${i}`);
      expect(res.meta.deployment).toBe(`sim/invented-${i}`);
    }
  }
  // sim/configured, sim/~pinned, and the first 32 pins that answered (their second requests used their own).
  expect(gw.health.size).toBe(1 + 1 + 32);
  await gw.close();
});

it('a pinned model gets a state of its own only once it has answered: names that never do take no place', () => {
  const catalog = new Catalog(config());
  const first = catalog.pinned('sim/typo-model')!;
  expect(first.stateKey).toBe('sim/~pinned');
  expect(catalog.pinned('sim/typo-model')!.stateKey).toBe('sim/~pinned'); // asked again, never answered: still shared
  catalog.servedPinned(catalog.pinned('sim/gpt-4o')!);
  expect(catalog.pinned('sim/gpt-4o')!.stateKey).toBe('sim/gpt-4o');
  for (let i = 0; i < 40; i++) catalog.servedPinned(catalog.pinned(`sim/real-${i}`)!);
  expect(catalog.pinned('sim/real-30')!.stateKey).toBe('sim/real-30'); // the 32nd place
  expect(catalog.pinned('sim/real-31')!.stateKey).toBe('sim/~pinned'); // the places are taken
});

it('a pinned model cooling down does not cool the provider\'s other pinned models down', async () => {
  const gw = createGateway(config());
  for (const model of ['sim/gpt-4o', 'sim/o3-mini']) await gw.chat(ask(model));
  gw.health.cooldown('sim/gpt-4o', 60_000, 'rate_limited'); // as its 429 would
  const refused = await gw.chat(ask('sim/gpt-4o')).catch((e: unknown) => e);
  expect((refused as GatewayError).code).toBe('all_candidates_unavailable');
  const other = await gw.chat(ask('sim/o3-mini'));
  expect(!other.stream && other.meta.deployment).toBe('sim/o3-mini');
  await gw.close();
});
