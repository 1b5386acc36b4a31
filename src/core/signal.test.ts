import { describe, expect, it } from 'vitest';
import { Cancellation, type Signal } from './signal.js';

describe('Cancellation', () => {
  it('aborts once: listeners run in order with the first reason, later aborts change nothing', () => {
    const c = new Cancellation();
    const seen: string[] = [];
    c.addEventListener('abort', () => seen.push(`a:${String(c.reason)}`));
    c.addEventListener('abort', () => seen.push(`b:${String(c.reason)}`));
    expect(c.aborted).toBe(false);
    c.abort('first');
    c.abort('second');
    expect(seen).toEqual(['a:first', 'b:first']);
    expect(c.reason).toBe('first');
    expect(() => c.throwIfAborted()).toThrow('first');
  });

  it('a removed listener is not called; removing one that was never added is harmless', () => {
    const c = new Cancellation();
    const calls: number[] = [];
    const one = () => calls.push(1);
    const two = () => calls.push(2);
    const three = () => calls.push(3);
    c.addEventListener('abort', one);
    c.addEventListener('abort', two);
    c.addEventListener('abort', three);
    c.removeEventListener('abort', two);
    c.removeEventListener('abort', () => {});
    c.abort(new Error('x'));
    expect(calls).toEqual([1, 3]);
  });

  it('a throwing listener does not keep the others from running, nor throw out of abort()', () => {
    const c = new Cancellation();
    let later = false;
    c.addEventListener('abort', () => {
      throw new Error('broken listener');
    });
    c.addEventListener('abort', () => (later = true));
    expect(() => c.abort('gone')).not.toThrow();
    expect(later).toBe(true);
  });

  it('follows a parent — a Cancellation or a real AbortSignal — until unlinked', () => {
    const parent = new Cancellation();
    const child = new Cancellation();
    child.follow(parent);
    parent.abort('deadline');
    expect(child.reason).toBe('deadline');

    const ac = new AbortController();
    const linked = new Cancellation();
    const unlinked = new Cancellation();
    linked.follow(ac.signal);
    unlinked.follow(ac.signal)();
    ac.abort('client gone');
    expect(linked.reason).toBe('client gone');
    expect(unlinked.aborted).toBe(false);

    const already = new Cancellation();
    already.follow(parent);
    expect(already.reason).toBe('deadline');
  });

  it('a listener added after the abort is never called (the caller checks `aborted` first)', () => {
    const c = new Cancellation();
    c.abort('done');
    let called = false;
    c.addEventListener('abort', () => (called = true));
    expect(called).toBe(false);
  });

  it('an AbortSignal is a Signal, so embedders may pass their own', () => {
    const s: Signal = new AbortController().signal;
    expect(s.aborted).toBe(false);
  });
});
