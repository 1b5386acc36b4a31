import { describe, expect, it } from 'vitest';
import { refusedByThisModel } from '../resilience/classify.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import { countedChars, LEARNT_MS, MARGIN, MAX_MODELS, refusedForSize, SizeLimits } from './refused-for-size.js';

const UPSTREAM_WORDS = 'This request would exceed the rate limit for your organization (0dccdde6) of 30,000 input tokens per minute.';
const rateLimited = (inputTokenLimit: number | undefined) =>
  new UpstreamError({ category: 'rate_limited', status: 429, message: UPSTREAM_WORDS, providerCode: 'rate_limit_error', headers: { 'x-a': '1' }, inputTokenLimit });
/** Characters that weigh just over, or exactly at, MARGIN times the limit at 4 a token. */
const OVER = 30_000 * MARGIN * 4 + 4;
const AT = 30_000 * MARGIN * 4;

describe('refusedForSize', () => {
  it('a prompt plainly over the named limit: a refusal by this deployment that refusedByThisModel knows, in its own words', () => {
    const err = refusedForSize(rateLimited(30_000), 'claude-sonnet-4-5', () => OVER) as UpstreamError;
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ category: 'invalid_request', status: 429, providerCode: 'rate_limit_error', param: 'messages', headers: { 'x-a': '1' } });
    expect(err.message).toBe(
      "Request too large for claude-sonnet-4-5 on input tokens per minute: the prompt alone is about 45,001 tokens, and this deployment's whole limit is 30,000. Reduce the prompt, or use a deployment with a larger limit",
    );
    // The upstream's words name its account: not passed on.
    expect(err.message).not.toContain('0dccdde6');
    expect(refusedByThisModel(err)).toBe(true);
  });

  it('at the margin, without a named limit, or not a rate limit: unchanged, and the prompt is not measured when nothing could come of it', () => {
    const e = rateLimited(30_000);
    expect(refusedForSize(e, 'm', () => AT)).toBe(e);
    let measured = 0;
    const measure = () => {
      measured++;
      return OVER;
    };
    const unnamed = rateLimited(undefined);
    expect(refusedForSize(unnamed, 'm', measure)).toBe(unnamed);
    const overloaded = new UpstreamError({ category: 'overloaded', status: 529, message: 'Overloaded', inputTokenLimit: 30_000 });
    expect(refusedForSize(overloaded, 'm', measure)).toBe(overloaded);
    const other = new Error('socket hang up');
    expect(refusedForSize(other, 'm', measure)).toBe(other);
    expect(measured).toBe(0);
  });

  it('keeps inputTokenLimit only as a positive whole number', () => {
    expect(rateLimited(0).inputTokenLimit).toBeUndefined();
    expect(rateLimited(Number.NaN).inputTokenLimit).toBeUndefined();
    expect(rateLimited(1.5).inputTokenLimit).toBeUndefined();
    expect(rateLimited(250_000).inputTokenLimit).toBe(250_000);
  });
});

describe('countedChars', () => {
  it('counts a run of whitespace once and no more than four of one character in a row, as tokenizers fold them', () => {
    expect(countedChars('plain words here')).toBe('plain words here'.length);
    expect(countedChars('{\n        "key": "value"\n}')).toBe('{ "key": "value" }'.length);
    expect(countedChars('a\t\t  \r\n b')).toBe(3);
    expect(countedChars('='.repeat(80))).toBe(4);
    expect(countedChars('aaaaab====c')).toBe(4 + 1 + 4 + 1);
    expect(countedChars('')).toBe(0);
  });
});

describe('SizeLimits', () => {
  const clockAt = (t: { now: number }) => ({ now: () => t.now, setTimer: () => ({ clear() {} }) }) as never;
  /** A send that fails with `err` (or succeeds), counting its calls. */
  const upstream = (err?: unknown) => {
    const u = { calls: 0, send: async () => (u.calls++, err === undefined ? 'answered' : Promise.reject(err)) };
    return u;
  };
  const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as UpstreamError);

  it('after a refusal for size, a prompt plainly over the learnt limit is refused unsent, without a call; one that fits is sent', async () => {
    const t = { now: 0 };
    const sizes = new SizeLimits(clockAt(t));
    const refusing = upstream(rateLimited(30_000));
    const first = await failure(sizes.send('m', () => OVER, refusing.send));
    expect(first).toMatchObject({ category: 'invalid_request', status: 429, unsent: false });
    const again = await failure(sizes.send('m', () => OVER, refusing.send));
    expect(again).toMatchObject({ category: 'invalid_request', unsent: true, param: 'messages', inputTokenLimit: 30_000 });
    expect(again!.message).toBe(first!.message);
    expect(refusedByThisModel(again!)).toBe(true);
    expect(refusing.calls).toBe(1);
    const serving = upstream();
    expect(await sizes.send('m', () => AT, serving.send)).toBe('answered');
    // Another model behind the same adapter learnt nothing.
    expect(await sizes.send('other', () => OVER, serving.send)).toBe('answered');
    expect(serving.calls).toBe(2);
    // Lapsed: asked again.
    t.now += LEARNT_MS;
    expect(await sizes.send('m', () => OVER, serving.send)).toBe('answered');
  });

  it('learns nothing from other failures, and a full table gives up the model learnt longest ago', async () => {
    const sizes = new SizeLimits(clockAt({ now: 0 }));
    const near = rateLimited(30_000);
    expect(await failure(sizes.send('m', () => AT, upstream(near).send))).toBe(near);
    const serving = upstream();
    await sizes.send('m', () => OVER, serving.send);
    expect(serving.calls).toBe(1);
    for (let i = 0; i <= MAX_MODELS; i++) await failure(sizes.send(`m${i}`, () => OVER, upstream(rateLimited(30_000)).send));
    await sizes.send('m0', () => OVER, serving.send);
    expect(serving.calls).toBe(2);
    expect(await failure(sizes.send('m1', () => OVER, serving.send))).toMatchObject({ unsent: true });
  });
});
