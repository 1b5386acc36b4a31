/**
 * A discrete-event clock for timeline tests: time only moves when the test (or,
 * in auto mode, an idle moment) advances it. `sleep` and timers never wait in
 * real time, so a ten-minute outage-and-recovery runs in milliseconds and the
 * same inputs always give the same timeline.
 */
import type { Clock, TimerHandle } from '../../src/core/clock.js';

interface Pending {
  at: number;
  seq: number;
  delay: number;
  fn: () => void;
  active: boolean;
}

export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly queue: Pending[] = [];
  private autoScheduled = false;

  /**
   * @param start epoch ms the clock starts at
   * @param auto when true, whenever the process is otherwise idle (a macrotask
   *   turn with nothing else to do) time jumps to the next pending timer: code
   *   under test runs as if every wait elapsed instantly, in order.
   */
  constructor(start = Date.UTC(2026, 0, 1), private readonly auto = false) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const p: Pending = { at: this.t + Math.max(0, ms), seq: this.seq++, delay: Math.max(0, ms), fn, active: true };
    this.insert(p);
    const clock = this;
    return {
      clear() {
        p.active = false;
      },
      refresh() {
        if (!p.active) return;
        clock.remove(p);
        p.at = clock.t + p.delay;
        p.seq = clock.seq++;
        clock.insert(p);
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        timer.clear();
        reject(signal!.reason);
      };
      const timer = this.setTimer(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Move time forward by `ms`, firing due timers in order (and the microtasks they cause). */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await flushMicrotasks();
      const next = this.peek();
      if (!next || next.at > target) break;
      this.queue.shift();
      this.t = Math.max(this.t, next.at);
      next.active = false;
      next.fn();
    }
    this.t = target;
    await flushMicrotasks();
  }

  /** Pending timer count (leak checks). */
  get pending(): number {
    return this.queue.filter((p) => p.active).length;
  }

  private peek(): Pending | undefined {
    while (this.queue.length > 0 && !this.queue[0]!.active) this.queue.shift();
    return this.queue[0];
  }

  private insert(p: Pending): void {
    let i = this.queue.length;
    while (i > 0 && (this.queue[i - 1]!.at > p.at || (this.queue[i - 1]!.at === p.at && this.queue[i - 1]!.seq > p.seq))) i--;
    this.queue.splice(i, 0, p);
    if (this.auto) this.scheduleAuto();
  }

  private remove(p: Pending): void {
    const i = this.queue.indexOf(p);
    if (i !== -1) this.queue.splice(i, 1);
  }

  private scheduleAuto(): void {
    if (this.autoScheduled) return;
    this.autoScheduled = true;
    // setImmediate runs after pending I/O and microtasks: "nothing else to do now".
    setImmediate(() => {
      this.autoScheduled = false;
      const next = this.peek();
      if (!next) return;
      this.queue.shift();
      this.t = Math.max(this.t, next.at);
      next.active = false;
      next.fn();
      if (this.peek()) this.scheduleAuto();
    });
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
