import { describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import { deployment, provider } from '../../test/helpers/deployments.js';
import { NO_HEADERS } from '../providers/types.js';
import type { Lease } from './lease.js';
import { isThrottled, Pacer, type Throttled } from './pacer.js';

const limits = (defaultRpm: number | null = null) => ({ limits: { defaultRpm } });

function lease(r: Lease | Throttled): Lease {
  if (isThrottled(r)) throw new Error(`throttled for ${r.waitMs} ms`);
  return r;
}
function waitOf(r: Lease | Throttled): number {
  if (!isThrottled(r)) throw new Error('expected a throttle');
  return r.waitMs;
}

describe('Pacer after a block (a 429 held, a Retry-After)', () => {
  it('takes one request at a time until one is answered; what was in flight before the block holds nothing back', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p'), 'm');
    const released = vi.fn();
    pacer.onRelease(released);
    // A long stream sent before the block stays in flight throughout.
    lease(pacer.tryAcquire(d, 1));
    pacer.block(d, clock.now() + 1000);
    expect(waitOf(pacer.tryAcquire(d, 1))).toBe(1000);
    await clock.advance(1000);
    const probe = lease(pacer.tryAcquire(d, 1));
    expect(waitOf(pacer.tryAcquire(d, 1))).toBe(1000);
    // Refused again (reconciled without a count): the next one is the next probe, and only one.
    probe.reconcile(undefined, NO_HEADERS);
    expect(released).toHaveBeenCalledTimes(1);
    const second = lease(pacer.tryAcquire(d, 1));
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
    // Answered: everyone may go.
    second.reconcile(3, NO_HEADERS);
    expect(released).toHaveBeenCalledTimes(2);
    for (let i = 0; i < 5; i++) lease(pacer.tryAcquire(d, 1));
  });

  it('a stream probe is answered at its head; a probe never sent lets the next one try', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p'), 'm');
    pacer.block(d, clock.now() + 500);
    await clock.advance(500);
    lease(pacer.tryAcquire(d, 1)).cancel();
    const stream = lease(pacer.tryAcquire(d, 1));
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
    stream.learn(NO_HEADERS);
    lease(pacer.tryAcquire(d, 1));
    lease(pacer.tryAcquire(d, 1));
  });
});

describe('Pacer', () => {
  it('limits nothing when neither the config nor a default says so', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const d = deployment(provider('p'), 'm');
    for (let i = 0; i < 5000; i++) expect(isThrottled(pacer.tryAcquire(d, 100_000))).toBe(false);
  });

  it('falls back to limits.defaultRpm for a provider without rpm, and only then', () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(3), clock);
    const bare = deployment(provider('bare'), 'm');
    const own = deployment(provider('own', { rpm: 5 }), 'm');
    for (let i = 0; i < 3; i++) lease(pacer.tryAcquire(bare, 1));
    expect(waitOf(pacer.tryAcquire(bare, 1))).toBe(61_000); // 3 used: wait for the minute to roll
    for (let i = 0; i < 5; i++) lease(pacer.tryAcquire(own, 1));
    expect(isThrottled(pacer.tryAcquire(own, 1))).toBe(true);
  });

  it('enforces at most rpm in any rolling minute, not burst + rpm', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p', { rpm: 60 }), 'm'); // burst 10, 1/s
    let sent = 0;
    for (let ms = 0; ms < 60_000; ms += 100) {
      while (!isThrottled(pacer.tryAcquire(d, 1))) sent++;
      await clock.advance(100);
    }
    // A bucket alone would have let 10 + 59 through by now.
    expect(sent).toBe(60);
  });

  it('counts every call of an attempt made as several (batched embeddings), and gives them all back on cancel', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p', { rpm: 60 }), 'm'); // burst 10, 1/s, 60 a minute
    const first = lease(pacer.tryAcquire(d, 1, clock.now(), 4));
    lease(pacer.tryAcquire(d, 1, clock.now(), 4));
    // 8 of the burst's 10 are taken: 4 more need 2 s of refill, 2 fit now.
    expect(waitOf(pacer.tryAcquire(d, 1, clock.now(), 4))).toBe(2_000);
    first.cancel();
    lease(pacer.tryAcquire(d, 1, clock.now(), 4));
    expect(pacer.waitMs(d, 1, 4)).toBe(2_000);
    expect(pacer.waitMs(d, 1, 2)).toBe(0);
    // More calls than the burst holds: it goes when the bucket is full and leaves a debt.
    await clock.advance(10_000);
    lease(pacer.tryAcquire(d, 1, clock.now(), 25));
    expect(pacer.waitMs(d, 1)).toBe(16_000);
    // The rolling minute counts all 33 calls: 27 more fit in it, not 59.
    await clock.advance(60_000 - 10_000 - 1_000);
    expect(pacer.waitMs(d, 1, 27)).toBe(0);
    expect(pacer.waitMs(d, 1, 28)).toBeGreaterThan(0);
  });

  it('is all-or-nothing across the provider and the deployment', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const p = provider('p', { rpm: 10 });
    const a = deployment(p, 'a', { rpm: 2 });
    const b = deployment(p, 'b');
    lease(pacer.tryAcquire(a, 1));
    lease(pacer.tryAcquire(a, 1));
    // a's own limit refuses: that refusal must not have spent provider capacity.
    for (let i = 0; i < 5; i++) expect(isThrottled(pacer.tryAcquire(a, 1))).toBe(true);
    for (let i = 0; i < 8; i++) lease(pacer.tryAcquire(b, 1));
    expect(isThrottled(pacer.tryAcquire(b, 1))).toBe(true);
  });

  it('shares provider tpm between deployments and reconciles estimates to actual usage', () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const p = provider('p', { tpm: 1000 });
    const a = deployment(p, 'a');
    const b = deployment(p, 'b', { tpm: 50_000 });
    const first = lease(pacer.tryAcquire(a, 600));
    expect(waitOf(pacer.tryAcquire(b, 600))).toBe(61_000);
    first.reconcile(150);
    lease(pacer.tryAcquire(b, 600));
    expect(isThrottled(pacer.tryAcquire(a, 300))).toBe(true);
  });

  it('gives everything back when a lease is cancelled, once', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const d = deployment(provider('p', { rpm: 1, tpm: 100 }), 'm');
    const l = lease(pacer.tryAcquire(d, 100));
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
    l.cancel();
    l.cancel();
    l.reconcile(100);
    const again = lease(pacer.tryAcquire(d, 100));
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
    again.reconcile(100);
  });

  it('learns a limit the config does not know from OpenAI headers, and forgets it at the reset', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p'), 'm');
    const l = lease(pacer.tryAcquire(d, 10));
    l.reconcile(10, { 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-reset-requests': '2s' });
    lease(pacer.tryAcquire(d, 10));
    lease(pacer.tryAcquire(d, 10));
    expect(waitOf(pacer.tryAcquire(d, 10))).toBe(2000);
    await clock.advance(2000);
    for (let i = 0; i < 50; i++) lease(pacer.tryAcquire(d, 10));
  });

  it('paces at the refill the upstream implies when it reports its limit', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p'), 'm');
    // 0 of 60 left, full again in 60 s: one more each second, not nothing for a minute.
    pacer.observe(d, {
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '1m0s',
    });
    expect(waitOf(pacer.tryAcquire(d, 1))).toBe(1000);
    await clock.advance(1000);
    lease(pacer.tryAcquire(d, 1));
    expect(waitOf(pacer.tryAcquire(d, 1))).toBe(1000);
  });

  it('learns token limits from Anthropic headers (RFC 3339 resets)', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('anthropic'), 'claude');
    const reset = new Date(clock.now() + 30_000).toISOString();
    pacer.observe(d, {
      'anthropic-ratelimit-tokens-remaining': '5000',
      'anthropic-ratelimit-tokens-reset': reset,
    });
    lease(pacer.tryAcquire(d, 4000));
    expect(waitOf(pacer.tryAcquire(d, 4000))).toBe(30_000);
    lease(pacer.tryAcquire(d, 1000));
    await clock.advance(30_000);
    lease(pacer.tryAcquire(d, 4000));
  });

  it('tightens a configured limit to what the upstream says is left', () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p', { rpm: 1000 }), 'm');
    pacer.observe(d, { 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '10s' });
    lease(pacer.tryAcquire(d, 1));
    expect(waitOf(pacer.tryAcquire(d, 1))).toBe(10_000);
  });

  it('counts its own in-flight attempts against what the upstream reported', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const d = deployment(provider('p'), 'm');
    const inFlight = [0, 1, 2].map(() => lease(pacer.tryAcquire(d, 1)));
    const headers = { 'x-ratelimit-remaining-requests': '3', 'x-ratelimit-reset-requests': '10s' };
    pacer.observe(d, headers); // 3 left minus 3 still in flight
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
    inFlight[0]!.reconcile(1, headers); // 3 left minus the 2 others
    lease(pacer.tryAcquire(d, 1));
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
  });

  it('learns from an answer’s head while its attempt is still out (a stream), counting that attempt as the upstream’s', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const d = deployment(provider('p'), 'm');
    const streaming = lease(pacer.tryAcquire(d, 10));
    const other = lease(pacer.tryAcquire(d, 10));
    // The head says 2 left: the answering attempt was counted upstream, the other may not have been.
    const head = { 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-reset-requests': '60s' };
    streaming.learn(head);
    lease(pacer.tryAcquire(d, 1));
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
    // When the stream ends a minute later, its head's headers are not learnt again (they are stale by then).
    await clock.advance(59_000);
    streaming.reconcile(5, head);
    other.reconcile(5);
    await clock.advance(1_000);
    lease(pacer.tryAcquire(d, 1));
    lease(pacer.tryAcquire(d, 1));
    lease(pacer.tryAcquire(d, 1));
  });

  it('does not count twice an attempt still out that the upstream has already answered (a burst of streams)', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const d = deployment(provider('p'), 'm');
    const first = lease(pacer.tryAcquire(d, 1000));
    const second = lease(pacer.tryAcquire(d, 1000));
    const head = (requests: number, tokens: number) => ({
      'x-ratelimit-remaining-requests': String(requests),
      'x-ratelimit-reset-requests': '60s',
      'x-ratelimit-remaining-tokens': String(tokens),
      'x-ratelimit-reset-tokens': '60s',
    });
    first.learn(head(9, 9000));
    // Both streams are running, and the upstream counted both before answering the second: 8 requests and 8000 tokens are left.
    second.learn(head(8, 8000));
    for (let i = 0; i < 8; i++) lease(pacer.tryAcquire(d, 1000));
    expect(isThrottled(pacer.tryAcquire(d, 1))).toBe(true);
    // An answer that ends meanwhile (its headers at the end, not its head's) excludes the streams still out as well.
    const buffered = new Pacer(limits(), new VirtualClock());
    const s = lease(buffered.tryAcquire(d, 0));
    s.learn(head(9, 9000));
    lease(buffered.tryAcquire(d, 0)).reconcile(0, head(8, 8000));
    for (let i = 0; i < 8; i++) lease(buffered.tryAcquire(d, 0));
    expect(isThrottled(buffered.tryAcquire(d, 0))).toBe(true);
  });

  it('learns nothing from a settled lease or an answer without headers', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const d = deployment(provider('p'), 'm');
    const l = lease(pacer.tryAcquire(d, 1));
    l.reconcile(1);
    l.learn({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '60s' });
    lease(pacer.tryAcquire(d, 1)).learn(NO_HEADERS);
    lease(pacer.tryAcquire(d, 1));
  });

  it('honours retry-after from a 429 for that deployment only', async () => {
    const clock = new VirtualClock();
    const pacer = new Pacer(limits(), clock);
    const p = provider('p');
    const hit = deployment(p, 'hit');
    const other = deployment(p, 'other');
    pacer.observe(hit, { 'retry-after': '7' });
    expect(waitOf(pacer.tryAcquire(hit, 1))).toBe(7000);
    lease(pacer.tryAcquire(other, 1));
    expect(pacer.earliestMs([hit], 1)).toBe(7000);
    await clock.advance(7000);
    lease(pacer.tryAcquire(hit, 1));
  });

  it('acquires the first candidate with capacity, or reports the earliest wait', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const a = deployment(provider('a'), 'm');
    const b = deployment(provider('b'), 'm');
    const c = deployment(provider('c'), 'm');
    pacer.observe(a, { 'retry-after-ms': '900' });
    pacer.observe(b, { 'retry-after-ms': '300' });
    const got = pacer.acquireFirst([a, b, c], 1);
    expect('lease' in got && got.dep === c && got.index === 2).toBe(true);
    expect(pacer.acquireFirst([a, b], 1)).toEqual({ waitMs: 300 });
    expect(pacer.earliestMs([a, b], 1)).toBe(300);
    expect(pacer.earliestMs([a, b, c], 1)).toBe(0);
    expect(pacer.waitMs(a, 1)).toBe(900);
  });

  it('tells listeners when capacity comes back early', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const d = deployment(provider('p', { tpm: 1000 }), 'm');
    const fn = vi.fn();
    const off = pacer.onRelease(fn);
    lease(pacer.tryAcquire(d, 100)).reconcile(100);
    expect(fn).not.toHaveBeenCalled();
    lease(pacer.tryAcquire(d, 100)).reconcile(20);
    lease(pacer.tryAcquire(d, 100)).cancel();
    expect(fn).toHaveBeenCalledTimes(2);
    off();
    lease(pacer.tryAcquire(d, 100)).cancel();
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('builds state once per key, in the store', () => {
    const pacer = new Pacer(limits(), new VirtualClock());
    const p = provider('p', { rpm: 5 });
    const d1 = deployment(p, 'm');
    const d2 = deployment(p, 'm'); // same key, another object
    for (let i = 0; i < 5; i++) lease(pacer.tryAcquire(i % 2 ? d1 : d2, 1));
    expect(isThrottled(pacer.tryAcquire(d1, 1))).toBe(true);
  });
});
