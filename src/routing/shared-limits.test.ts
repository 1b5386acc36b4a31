import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/parse.js';
import { isThrottled, Pacer } from '../limits/pacer.js';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import { Catalog } from './catalog.js';

/** sim/m in two aliases: 'generous' says rpm 100 and tpm 50,000, 'strict' rpm 2 and tpm 3,000. */
const config = parseConfig(
  {
    providers: [{ id: 'sim', type: 'simulated' }],
    models: [
      { name: 'generous', deployments: [{ provider: 'sim', model: 'm', rpm: 100, tpm: 50_000, weight: 5 }] },
      { name: 'strict', deployments: [{ provider: 'sim', model: 'm', rpm: 2, tpm: 3_000 }] },
    ],
  },
  {},
);
const dep = (catalog: Catalog, alias: string) => catalog.aliases.get(alias)!.segments[0]!.pool[0]!;

describe('a deployment in several aliases with different limits', () => {
  it('is paced by the lowest rpm whichever alias asks first', () => {
    const catalog = new Catalog(config);
    const pacer = new Pacer(config, new VirtualClock());
    // The generous alias reaches the pacer first: it must not set the shared state's limits.
    const taken = [0, 1, 2].map(() => pacer.tryAcquire(dep(catalog, 'generous'), 1));
    expect(taken.map(isThrottled)).toEqual([false, false, true]);
    expect(isThrottled(pacer.tryAcquire(dep(catalog, 'strict'), 1))).toBe(true);
  });

  it('is paced by the lowest tpm, and each alias keeps its own other settings', () => {
    const catalog = new Catalog(config);
    const pacer = new Pacer(config, new VirtualClock());
    expect(isThrottled(pacer.tryAcquire(dep(catalog, 'generous'), 2_000))).toBe(false);
    expect(isThrottled(pacer.tryAcquire(dep(catalog, 'generous'), 2_000))).toBe(true);
    expect(dep(catalog, 'generous')).toMatchObject({ rpm: 2, tpm: 3_000, weight: 5 });
    expect(dep(catalog, 'strict')).toMatchObject({ rpm: 2, tpm: 3_000, weight: 1 });
  });
});
