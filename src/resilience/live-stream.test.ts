/**
 * LiveStream's release of capacity when the consumer leaves at the awkward
 * moment: while a continuation is being opened after a cut. The socket tests
 * (test/limits/spent-capacity.test.ts) cover a client leaving a running
 * stream; this race — the continuation commits just after the client has
 * gone — is too narrow to hit over sockets every time, so it is driven here
 * with a resume the test settles by hand.
 */
import { describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import { parseConfig } from '../config/parse.js';
import { Cancellation } from '../core/signal.js';
import { STREAM_END } from '../core/stream-reader.js';
import { EventBus, type AttemptTrace } from '../observability/events.js';
import type { ChatCompletionChunk } from '../protocol/openai.js';
import type { Candidate } from '../routing/chain.js';
import type { AttemptScope } from './attempt-scope.js';
import type { Attempted, Lease } from './executor.js';
import { Health } from './health.js';
import { LiveStream } from './live-stream.js';
import { RequestRun } from './run.js';
import type { Committed } from './stream-attempt.js';
import { UpstreamError } from './upstream-error.js';

const config = parseConfig({ providers: [{ id: 'p', type: 'simulated' }], resilience: { streamResume: true } }, {});
const candidate = { deployment: { key: 'p/m', stateKey: 'p/m', provider: config.providers[0], model: 'm', timeouts: { idleTimeoutMs: 1000 } }, alias: 'a', fallback: false, selection: 'weighted' } as unknown as Candidate;

const chunk = (delta: Record<string, unknown>): ChatCompletionChunk => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: null }],
});

const fakeScope = () => ({ arm: vi.fn(), hold: vi.fn(), release: vi.fn(), refresh: vi.fn(), dispose: vi.fn() });
const fakeLease = () => ({ reconcile: vi.fn(), cancel: vi.fn(), learn: vi.fn() }) satisfies Lease;

function attempted(pending: ChatCompletionChunk[], iterator: AsyncIterator<ChatCompletionChunk>): Attempted<Committed> & { lease: ReturnType<typeof fakeLease>; scope: ReturnType<typeof fakeScope> } {
  const scope = fakeScope();
  const value: Committed = { stream: { headers: {}, malformed: 0, [Symbol.asyncIterator]: () => iterator }, iterator, pending, ttftMs: 1 };
  const trace: AttemptTrace = { provider: 'p', model: 'm', status: 200, errorType: null, latencyMs: 1, ttftMs: 1 };
  return { value, candidate, scope: scope as unknown as AttemptScope & typeof scope, lease: fakeLease(), trace };
}

/** An upstream that is cut right after what it already sent. */
async function* cutNow(): AsyncGenerator<ChatCompletionChunk> {
  yield* [];
  throw new UpstreamError({ category: 'network', message: 'socket closed' });
}

describe('LiveStream: the consumer leaves while a continuation is being opened', () => {
  it('releases the continuation that commits afterwards, and counts its capacity as spent', async () => {
    const run = new RequestRun('r1', 0, 'a', null, 'public', true, 'chat', new Cancellation(), 60_000);
    let resolveResume!: (next: Attempted<Committed>) => void;
    const onEnd = vi.fn();
    const attemptsEnded: [Attempted<Committed>, string | null][] = [];
    const first = attempted([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' })], cutNow());
    const live = new LiveStream(first, {
      run,
      health: new Health(config.resilience, new VirtualClock(), new EventBus()),
      cfg: config.resilience,
      includeUsage: false,
      choices: 1,
      promptTokensEstimate: 3,
      resume: () => new Promise((r) => (resolveResume = r)),
      onAttemptEnd: (a) => attemptsEnded.push([a, a.trace.errorType]),
      onEnd,
    });

    // The two held-back chunks reach the consumer; then the upstream's cut starts a resume.
    expect(live.read()).toMatchObject({ choices: [{ delta: { role: 'assistant' } }] });
    expect(live.read()).toMatchObject({ choices: [{ delta: { content: 'Hello' } }] });
    expect(live.read()).toBeNull();
    await live.wait();
    expect(live.read()).toBeNull(); // resuming
    expect(resolveResume).toBeTypeOf('function');

    live.close(); // the client left
    expect(onEnd).toHaveBeenCalledOnce();
    expect(first.lease.reconcile).toHaveBeenCalledOnce(); // the cut attempt is settled at once
    expect(attemptsEnded).toEqual([[first, 'network']]); // and reported as the failure it was, not the success it looked like at commit

    const returned = vi.fn(async () => ({ done: true as const, value: undefined }));
    const next = attempted([chunk({ content: ' world' })], { next: vi.fn(), return: returned });
    resolveResume(next);
    await new Promise((r) => setImmediate(r));

    // The continuation reached its upstream (it committed): released, and spent rather than given back.
    expect(next.lease.reconcile).toHaveBeenCalledOnce();
    expect(next.lease.cancel).not.toHaveBeenCalled();
    expect(next.scope.dispose).toHaveBeenCalled();
    expect(returned).toHaveBeenCalledOnce();
    expect(attemptsEnded.map(([a]) => a)).toEqual([first, next]);
    expect(live.read()).toBe(STREAM_END); // over: the continuation's chunk goes to nobody
    expect(onEnd).toHaveBeenCalledOnce();
  });
});
