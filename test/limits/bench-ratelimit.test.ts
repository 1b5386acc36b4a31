/**
 * `npm run bench:ratelimit` on its compressed clock is deterministic and takes
 * milliseconds, so its bar is also checked here: zero client errors, zero
 * upstream 429s, the free tier used up to its limit and the overflow spread
 * down the tiers.
 */
import { describe, expect, it } from 'vitest';
import { formatReport, runRateLimitBench } from '../../bench/ratelimit.js';

describe('bench:ratelimit (compressed clock)', () => {
  it('3× the primary limit for 60 s: every request served, no upstream 429', async () => {
    const r = await runRateLimitBench({ seconds: 60, multiplier: 3, real: false });
    expect(r.requests).toBe(60);
    expect(r.errors).toEqual({});
    expect(r.ok).toBe(60);
    const [primary, secondary, local] = r.tiers;
    expect(r.tiers.map((t) => t.upstream429s)).toEqual([0, 0, 0]);
    expect(primary!.served).toBe(20);
    expect(secondary!.served).toBeLessThanOrEqual(40);
    expect(primary!.served + secondary!.served + local!.served).toBe(60);
    expect(formatReport(r)).toContain('client errors: none');
  });

  it('6× for five minutes: each tier serves its limit per minute, the local tier the rest', async () => {
    const r = await runRateLimitBench({ seconds: 300, multiplier: 6, real: false });
    expect(r.errors).toEqual({});
    expect(r.tiers.map((t) => t.upstream429s)).toEqual([0, 0, 0]);
    expect(r.tiers.map((t) => t.served)).toEqual([100, 200, 300]);
  });
});
