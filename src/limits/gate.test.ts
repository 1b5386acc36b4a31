import { describe, expect, it } from 'vitest';
import type { Config } from '../config/types.js';
import { EventBus } from '../observability/events.js';
import type { Candidate } from '../routing/chain.js';
import type { RequestRun } from '../resilience/run.js';
import { deployment, provider } from '../../test/helpers/deployments.js';
import { LimitsGate } from './gate.js';

const config = { limits: { defaultRpm: null }, resilience: { throttleMaxWaitMs: 2000 } } as unknown as Config;

describe('LimitsGate', () => {
  it('serves a waiter already due before a newcomer’s attempt takes the capacity', async () => {
    // Timers that never fire: the event loop is busy past the waiter's due time.
    let t = Date.UTC(2026, 0, 1);
    const clock = { now: () => t, setTimer: () => ({ clear() {}, refresh() {} }), sleep: () => Promise.resolve() };
    const gate = new LimitsGate(config, clock, new EventBus());
    const a = deployment(provider('a'), 'm');
    gate.pacer.observe(a, { 'retry-after-ms': '500', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '60s' });
    const run = { deadlineAt: t + 60_000, signal: undefined } as unknown as RequestRun;
    let served: unknown;
    void gate.wait([{ deployment: a } as Candidate], run, 1).then((r) => (served = r));
    t += 600;
    expect(gate.acquire(a, run, 1).ok).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(served).toMatchObject({ candidate: { deployment: a } });
  });
});
