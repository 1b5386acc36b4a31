import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import type { KeyConfig } from '../config/types.js';
import { MemoryStateStore } from '../state/memory-store.js';
import { KeyLimiter, type KeyCheck } from './key-limiter.js';
import type { Lease } from './lease.js';

const key = (id: string, limits: { rpm?: number; tpm?: number }): KeyConfig => ({
  id,
  key: `secret-${id}`,
  dataClass: 'internal',
  allowExternal: true,
  ...limits,
});

function leaseOf(r: KeyCheck): Lease {
  if (!r.ok) throw new Error(`refused for ${r.retryAfterMs} ms`);
  return r.lease;
}

describe('KeyLimiter', () => {
  it('allows rpm requests per rolling minute, then answers with a Retry-After', async () => {
    const clock = new VirtualClock();
    const limiter = new KeyLimiter(clock);
    const k = key('team-a', { rpm: 2 });
    leaseOf(limiter.check(k, 10));
    await clock.advance(15_000);
    leaseOf(limiter.check(k, 10));
    expect(limiter.check(k, 10)).toEqual({ ok: false, retryAfterMs: 46_000 });
    await clock.advance(46_000);
    leaseOf(limiter.check(k, 10));
    expect(limiter.check(k, 10).ok).toBe(false);
  });

  it('does not smooth bursts: the whole minute may be spent at once', () => {
    const limiter = new KeyLimiter(new VirtualClock());
    const k = key('burst', { rpm: 100 });
    for (let i = 0; i < 100; i++) leaseOf(limiter.check(k, 0));
    expect(limiter.check(k, 0).ok).toBe(false);
  });

  it('admits while the minute has room, counting requests in flight at their estimate until their usage corrects it', () => {
    const limiter = new KeyLimiter(new VirtualClock());
    const k = key('t', { tpm: 1000 });
    const l = leaseOf(limiter.check(k, 800));
    // 800 of 1000 used: room, so the next goes, though its estimate overshoots.
    const l2 = leaseOf(limiter.check(k, 300));
    expect(limiter.check(k, 1)).toEqual({ ok: false, retryAfterMs: 61_000 });
    l.reconcile(100);
    l2.reconcile(300);
    leaseOf(limiter.check(k, 600));
    expect(limiter.check(k, 1).ok).toBe(false);
  });

  it('lets a small quota serve requests whose completion budget alone exceeds it', () => {
    const limiter = new KeyLimiter(new VirtualClock());
    const k = key('small', { tpm: 500 });
    // Five prompt tokens plus the 1,024 reserved when max_tokens is unset; each used 18.
    for (let i = 0; i < 3; i++) leaseOf(limiter.check(k, 1029)).reconcile(18);
    leaseOf(limiter.check(k, 1029)); // in flight at 1,029: the minute is now over
    expect(limiter.check(k, 1029).ok).toBe(false);
  });

  it('does not count a request refused before it was served', () => {
    const limiter = new KeyLimiter(new VirtualClock());
    const k = key('c', { rpm: 1, tpm: 100 });
    const l = leaseOf(limiter.check(k, 100));
    expect(limiter.check(k, 1).ok).toBe(false);
    l.cancel();
    l.reconcile(100); // ignored: already settled
    leaseOf(limiter.check(k, 100));
  });

  it('keeps keys apart and allocates nothing for a key without limits', () => {
    const store = new MemoryStateStore();
    const limiter = new KeyLimiter(new VirtualClock(), store);
    const a = key('a', { rpm: 1 });
    const b = key('b', { rpm: 1 });
    leaseOf(limiter.check(a, 1));
    leaseOf(limiter.check(b, 1));
    expect(limiter.check(a, 1).ok).toBe(false);
    const free = key('free', {});
    const first = limiter.check(free, 1_000_000);
    expect(first.ok).toBe(true);
    expect(limiter.check(free, 1_000_000)).toBe(first);
    expect(store.size).toBe(2);
  });
});
