/**
 * Waiting for the thing itself, not for time: a bus event, a request's trace, a
 * condition. Each wait is bounded and fails with a message naming what never came,
 * so a broken behaviour is a clear failure in a second or two, not a silent hang to
 * vitest's timeout — and not a pass because a sleep happened to be long enough.
 */
import type { ServerResponse } from 'node:http';
import type { EventBus, GatewayEventMap, TraceRecord } from '../../src/observability/events.js';
import type { TestGateway } from './gateway.js';

/** How long a wait may take before it fails: generous for a loaded 2-core machine, short beside vitest's 5 s. */
export const WAIT_BOUND_MS = 2_000;

/**
 * Rejects after `ms` of real time with "timed out waiting for `what`" (a bound on a wait
 * for an event, never a timeline); `done()` clears the bound.
 */
function bound(what: string | (() => string), ms: number, reject: (err: Error) => void): () => void {
  const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${typeof what === 'string' ? what : what()}`)), ms);
  return () => clearTimeout(t);
}

/** The first `name` event on `bus` that matches `pred`, from now on. Subscribe before doing what causes it. */
export function nextEvent<K extends keyof GatewayEventMap>(
  bus: EventBus,
  name: K,
  pred: (e: GatewayEventMap[K]) => boolean = () => true,
  what = `a '${name}' event`,
  ms = WAIT_BOUND_MS,
): Promise<GatewayEventMap[K]> {
  return new Promise((resolve, reject) => {
    const off = bus.on(name, (e) => {
      if (!pred(e)) return;
      off();
      done();
      resolve(e);
    });
    const done = bound(what, ms, (err) => {
      off();
      reject(err);
    });
  });
}

/** `p`, or a failure naming `what` if it has not settled within `ms`: for a promise that must not wait on something. */
export function within<T>(p: Promise<T>, what: string, ms = WAIT_BOUND_MS): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = bound(what, ms, reject);
    p.then(
      (v) => (done(), resolve(v)),
      (err: unknown) => (done(), reject(err)),
    );
  });
}

/**
 * The first `n` `name` events on `bus` that match `pred`, from now on (subscribe before causing
 * them): e.g. the `request` events of requests a test started, once each is finished.
 */
export function events<K extends keyof GatewayEventMap>(
  bus: EventBus,
  name: K,
  n: number,
  pred: (e: GatewayEventMap[K]) => boolean = () => true,
  what = `${n} '${name}' events`,
  ms = WAIT_BOUND_MS,
): Promise<GatewayEventMap[K][]> {
  return new Promise((resolve, reject) => {
    const seen: GatewayEventMap[K][] = [];
    const off = bus.on(name, (e) => {
      if (!pred(e)) return;
      seen.push(e);
      if (seen.length < n) return;
      off();
      done();
      resolve(seen);
    });
    const done = bound(what, ms, (err) => {
      off();
      reject(new Error(`${err.message} (${seen.length} came)`));
    });
  });
}

/**
 * Request `id`'s trace: from the store when its `request` event already came (it is emitted
 * when the request is finished, which for a stream can be just after the client read the end),
 * else the `request` event itself.
 */
export function traceOf(gw: TestGateway, id: string | null): Promise<TraceRecord> {
  if (id === null) return Promise.reject(new Error('no x-request-id on the response: no trace to wait for'));
  const stored = gw.observability.traces.get(id);
  if (stored) return Promise.resolve(stored);
  return nextEvent(gw.gateway.bus, 'request', (t) => t.id === id, `the trace of request ${id}`);
}

/**
 * Resolves once `pred()` holds, for what has no event of its own (a socket count, a timer the
 * gateway cleared). Checked after each turn of the event loop (setImmediate: after pending I/O)
 * at first, then every millisecond, so a longer wait does not spin a core.
 */
export async function until(pred: () => boolean, what: string, ms = WAIT_BOUND_MS): Promise<void> {
  const deadline = performance.now() + ms;
  for (let turns = 0; !pred(); turns++) {
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => (turns < 100 ? setImmediate(r) : setTimeout(r, 1)));
  }
}

/** A promise with its resolve outside: the test's half of a handshake with a scripted upstream. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Resolves when the other side has hung up on this scripted upstream response (the gateway gave
 * up on it, or was closed): an upstream that holds its connection open in silence until then,
 * rather than sleeping a minute.
 */
export function hungUp(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => (res.destroyed ? resolve() : res.once('close', () => resolve())));
}

/** Text a client has read so far, and promises for parts of it: see seenText. */
export interface SeenText {
  readonly text: string;
  /**
   * The first `reached` that timed out: an upstream handler's rejection is swallowed (the fake
   * upstream destroys the response), so the test reads it here to fail with what never came.
   */
  readonly failed: Error | undefined;
  /** The client read `piece`. */
  add(piece: string): void;
  /** Resolves once the text read so far includes `part`; rejects after `ms` naming it. */
  reached(part: string, ms?: number): Promise<void>;
  /**
   * Throws if a handshake failed, or is still waiting: after the test's reading, every `reached`
   * must have come true (a cut made late by another timer would otherwise pass unseen).
   */
  check(): void;
  /** Reads `res`'s body to its end through `add`; its text, or `failed` if a handshake timed out. */
  readAll(res: Response): Promise<string>;
}

/**
 * What a client has read of an answer, for a scripted upstream's half of a handshake: it writes
 * its next bytes (or cuts) once the client has read what came before — so the gateway had taken
 * and forwarded it — not after a pause that is usually long enough.
 */
export function seenText(): SeenText {
  let text = '';
  let failed: Error | undefined;
  const waiting: { part: string; resolve: () => void }[] = [];
  return {
    get text() {
      return text;
    },
    get failed() {
      return failed;
    },
    add(piece) {
      text += piece;
      for (let i = waiting.length - 1; i >= 0; i--) {
        if (!text.includes(waiting[i]!.part)) continue;
        waiting[i]!.resolve();
        waiting.splice(i, 1);
      }
    },
    check() {
      if (failed) throw failed;
      if (waiting.length > 0) throw new Error(`still waiting for the client to read ${waiting.map((w) => JSON.stringify(w.part)).join(', ')} (it read ${JSON.stringify(text.slice(-200))})`);
    },
    async readAll(res) {
      const decoder = new TextDecoder();
      if (res.body) for await (const bytes of res.body) this.add(decoder.decode(bytes, { stream: true }));
      this.add(decoder.decode());
      this.check();
      return text;
    },
    reached(part, ms = WAIT_BOUND_MS) {
      if (text.includes(part)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const entry = { part, resolve: () => (done(), resolve()) };
        const done = bound(() => `the client to read ${JSON.stringify(part)} (it read ${JSON.stringify(text.slice(-200))})`, ms, (err) => {
          waiting.splice(waiting.indexOf(entry), 1);
          failed ??= err;
          reject(err);
        });
        waiting.push(entry);
      });
    },
  };
}

/**
 * A fetch for an SDK client (the `openai` client's `fetch` option) whose response bodies pass
 * through `seen()` as they arrive: seenText's handshake for tests that read through an SDK.
 */
export function fetchSeenBy(seen: () => SeenText): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!res.body) return res;
    const target = seen();
    const decoder = new TextDecoder();
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(bytes, out) {
          target.add(decoder.decode(bytes, { stream: true }));
          out.enqueue(bytes);
        },
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
