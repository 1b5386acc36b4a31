/**
 * The conformance suite every StateStore runs (memory now; a shared backend
 * later runs the same cases against a real server).
 */
import { expect, it } from 'vitest';
import type { StateStore } from './store.js';

export function runStateStoreCases(newStore: () => StateStore | Promise<StateStore>): void {
  it('builds an object once per key and hands back the same one', async () => {
    const store = await newStore();
    let built = 0;
    const make = () => ({ n: ++built });
    const a = store.local('pace:provider:x', make);
    const again = store.local('pace:provider:x', make);
    expect(again).toBe(a);
    expect(built).toBe(1);
    expect(store.local('pace:provider:y', make)).not.toBe(a);
    expect(store.size).toBe(2);
    await store.close();
  });

  it('keeps state mutations made through the object', async () => {
    const store = await newStore();
    store.local('key:a', () => ({ used: 0 })).used += 5;
    expect(store.local('key:a', () => ({ used: 0 })).used).toBe(5);
    await store.close();
  });
}
