import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../test/helpers/virtual-clock.js';
import { AttemptAborted } from './abort.js';
import { AttemptScope } from './attempt-scope.js';

describe('AttemptScope', () => {
  it('aborts with the armed kind when its timer runs out', async () => {
    const clock = new VirtualClock(0);
    const scope = new AttemptScope(new AbortController().signal, clock);
    scope.arm(100, 'idle', 'stalled');
    await clock.advance(99);
    expect(scope.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(scope.signal.reason).toBeInstanceOf(AttemptAborted);
    expect((scope.signal.reason as AttemptAborted).kind).toBe('idle');
  });

  it('does not abort while the consumer holds a chunk; the countdown restarts on release', async () => {
    const clock = new VirtualClock(0);
    const scope = new AttemptScope(new AbortController().signal, clock);
    scope.arm(100, 'idle', 'stalled');
    scope.hold();
    await clock.advance(500);
    expect(scope.signal.aborted).toBe(false);
    scope.release();
    await clock.advance(99);
    expect(scope.signal.aborted).toBe(false);
    await clock.advance(2);
    expect(scope.signal.aborted).toBe(true);
  });

  it('follows the request signal, and unlinks from it on dispose', () => {
    const parent = new AbortController();
    const scope = new AttemptScope(parent.signal, new VirtualClock(0));
    const other = new AttemptScope(parent.signal, new VirtualClock(0));
    other.dispose();
    parent.abort(new Error('client gone'));
    expect((scope.signal.reason as Error).message).toBe('client gone');
    expect(other.signal.aborted).toBe(false);
  });

  it('names the limit in the abort message when armed without one', async () => {
    const clock = new VirtualClock(0);
    const scope = new AttemptScope(new AbortController().signal, clock);
    scope.arm(250, 'attempt_timeout');
    await clock.advance(250);
    expect((scope.signal.reason as AttemptAborted).message).toBe('no answer within 250 ms');
    const ttft = new AttemptScope(new AbortController().signal, clock);
    ttft.arm(40, 'ttft');
    await clock.advance(40);
    expect((ttft.signal.reason as AttemptAborted).message).toBe('no first token within 40 ms');
  });
});
