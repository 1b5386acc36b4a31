/**
 * A committed stream: what the client reads (`read`/`wait`, or iterates in
 * process) after the commit point.
 *
 * Why this is more than a pass-through: after the first token the gateway can
 * no longer fail over silently, and the easy mistakes are all here — a stream
 * cut mid-answer presented as finished, a stalled upstream hanging the client,
 * usage that counts the wrong attempts. So: a stall timer re-armed per chunk
 * that moves the answer on (a refresh, no allocation; a chunk with nothing in
 * it is passed on but restarts nothing, see StreamTally.progressed); a cut or stall before `finish_reason` is a
 * failure, never an end; with `streamResume` the text delivered so far is sent
 * back as an assistant prefill and the continuation is streamed on in the same
 * response (ending where it completes a stop sequence the cut split);
 * otherwise reading throws StreamBrokenError (the server writes it as an
 * OpenAI-style error event). After a `finish_reason` the answer is
 * complete: a missing `[DONE]` or usage chunk only costs a short grace period.
 */
import type { ResilienceConfig } from '../config/types.js';
import { GatewayError } from '../core/errors.js';
import { STREAM_END, type StreamReader } from '../core/stream-reader.js';
import type { ChatCompletionChunk } from '../protocol/openai.js';
import { isChunkPull, type ChunkPull } from '../providers/types.js';
import { StreamTally } from './stream-tally.js';
import { IteratorPull, PULL_END } from '../core/iterator-pull.js';
import { AttemptAborted } from './abort.js';
import type { Attempted } from './executor.js';
import type { Health } from './health.js';
import { asAnswer, normalizeFailure } from './outcome.js';
import type { RequestRun } from './run.js';
import type { Committed } from './stream-attempt.js';
import { UpstreamError } from './upstream-error.js';
import { costUsd } from '../observability/cost.js';
import type { AttemptUsage } from '../observability/events.js';

/** How long to wait for a usage chunk / clean close after `finish_reason`. */
const FINISH_GRACE_MS = 1000;
const MAX_RESUMES = 3;

/**
 * unread: not read yet (the stall timer starts with the first read); pending: the attempt's held-back chunks; upstream: reading it; closing: the
 * attempt is done (count its usage); complete/final: the answer is whole (the
 * usage chunk, then the end); resuming: a continuation is being opened; over.
 */
type Phase = 'unread' | 'pending' | 'upstream' | 'closing' | 'complete' | 'final' | 'resuming' | 'over';

export class StreamBrokenError extends GatewayError {
  constructor(readonly upstream: UpstreamError, deliveredChars: number, resumeNote: string) {
    super(502, "stream_broken", `The upstream stream broke after ${deliveredChars} characters (${upstream.label}: ${upstream.message}); ${resumeNote}`);
  }
}

export interface LiveStreamOptions {
  run: RequestRun;
  health: Health;
  cfg: ResilienceConfig;
  includeUsage: boolean;
  /** The answers asked for (`n`): the stream is finished when each has its finish_reason. */
  choices: number;
  promptTokensEstimate: number;
  /**
   * The request's stop sequences that can span a cut (`seamStops`): a continuation cannot see
   * one whose start was sent before the cut, so the stream checks that seam. Undefined: none.
   */
  stop?: readonly string[];
  /**
   * Continue after a cut: resolves with a committed continuation, or rejects. `spentTokens`:
   * the completion tokens of the attempts so far (the broken one's counted if it reported none).
   */
  resume(prefill: string, spentTokens: number): Promise<Attempted<Committed>>;
  /** Called once per attempt (the first and each continuation), when it is over: its trace is final then. `usage`: what it spent, once counted. */
  onAttemptEnd(attempt: Attempted<Committed>, usage?: AttemptUsage): void;
  /** Called once, when the stream is over for whatever reason. */
  onEnd(): void;
}

export class LiveStream implements AsyncIterable<ChatCompletionChunk>, StreamReader {
  private cur: Attempted<Committed>;
  private readonly tally: StreamTally;
  private iterated = false;

  /** Where reading stands (see `read`). */
  private phase: Phase = 'unread';
  /** Next of the current attempt's held-back chunks to deliver. */
  private pi = 0;
  private graceArmed = false;
  /** The current attempt's upstream has ended (or thrown). */
  private upstreamDone = false;
  private resumes = 0;
  /** The current attempt's usage and capacity are settled (`closeAttempt` ran). */
  private attemptClosed = false;
  /**
   * The consumer let go of its chunk and the stall timer's restart is owed: made
   * by the next chunk's arrival, or before reading returns to wait (see read).
   */
  private restartOwed = false;
  /** The consumer holds the last chunk handed out: the stall timer is paused meanwhile. */
  private holding = false;
  /**
   * Letting go of what it held owes the stall timer a restart: a chunk that made progress, or
   * a pause. Not an empty chunk: its release leaves the countdown where it was.
   */
  private restartOnRelease = false;
  /** The current attempt's upstream, read pull-style. */
  private src: ChunkPull | IteratorPull<ChatCompletionChunk> | undefined;
  /** A resume in flight: settles (never rejects) when `phase` has moved on. */
  private resuming: Promise<void> | undefined;
  /** The error `read` throws once the stream is over. */
  private failure: { err: unknown } | undefined;
  private closed = false;

  constructor(first: Attempted<Committed>, private readonly o: LiveStreamOptions) {
    this.cur = first;
    // The upstream's first chunk labels the chunks the gateway writes itself (the usage chunk, a
    // continuation's), when its fields are what they should be: relayed as it came, a chunk may
    // carry anything there, and an array nested some thousands deep failed that usage chunk's
    // serialisation (a healthy stream ended in stream_error).
    const head = first.value.pending[0] as Partial<Record<'id' | 'model' | 'created', unknown>> | undefined;
    this.tally = new StreamTally(
      typeof head?.id === 'string' ? head.id : `chatcmpl-${o.run.id}`,
      typeof head?.model === 'string' ? head.model : first.candidate.deployment.model,
      typeof head?.created === 'number' && Number.isFinite(head.created) ? head.created : Math.floor(o.run.startedAt / 1000),
      o.cfg.streamResume,
      o.choices,
    );
  }

  private startAttempt(): void {
    const it = this.cur.value.iterator;
    this.src = isChunkPull(it) ? it : new IteratorPull(it);
    this.cur.scope.arm(this.cur.candidate.deployment.timeouts.idleTimeoutMs, 'idle', 'upstream stream stalled');
    this.restartOwed = false; // a fresh timer
    this.graceArmed = false;
    this.attemptClosed = false;
    this.pi = 0;
    this.phase = 'pending';
  }

  /**
   * The next chunk for the client, without a promise when one is ready:
   * STREAM_END when the stream is over, null when nothing is ready yet (await
   * `wait()`, then read again). Throws once the stream failed (the stream is
   * then over and released). A consumer that stops early calls `close()`.
   */
  read(): ChatCompletionChunk | typeof STREAM_END | null {
    if (this.holding) {
      // The countdown restarts when the next chunk arrives or before waiting for it,
      // not here as well: a stream reads its clock once a chunk, not twice.
      this.holding = false;
      if (this.restartOnRelease) this.restartOwed = true;
      this.cur.scope.release(false);
    }
    try {
      for (;;) {
        switch (this.phase) {
          case 'unread':
            this.startAttempt();
            break;
          case 'pending': {
            const c = this.cur.value;
            while (this.pi < c.pending.length) {
              const out = this.tally.take(c.pending[this.pi++]!);
              if (out) return this.hand(out);
            }
            c.pending.length = 0;
            this.pi = 0;
            this.upstreamDone = false;
            this.phase = 'upstream';
            break;
          }
          case 'upstream': {
            if (this.tally.complete) {
              this.phase = 'closing';
              break;
            }
            const r = this.src!.pull();
            if (r === undefined) {
              if (this.restartOwed) {
                this.restartOwed = false;
                this.cur.scope.refresh();
              }
              return null;
            }
            if (r === PULL_END) {
              this.upstreamDone = true;
              this.phase = 'closing';
              break;
            }
            const out = this.tally.take(r);
            // Only progress restarts the countdown: chunks with nothing in them, however many, do not.
            if (this.tally.progressed) {
              this.restartOwed = false;
              this.cur.scope.refresh();
            }
            if (this.tally.finished && !this.graceArmed) {
              this.graceArmed = true;
              this.cur.scope.arm(FINISH_GRACE_MS, 'idle', 'no usage after finish_reason');
            }
            if (out) return this.hand(out);
            break;
          }
          case 'closing': {
            // Text held at a stop sequence's seam when the continuation ended without a finish: still the answer's.
            const held = this.tally.heldOut();
            if (held) return this.hand(held);
            // With n > 1 an upstream may end cleanly once one choice finished (its own
            // end check sees a finish_reason): the others were cut, and the answer is not whole.
            if (this.o.choices > 1 && !this.tally.finished) {
              throw new UpstreamError({ category: 'network', message: 'upstream stream ended before every choice finished' });
            }
            this.closeAttempt();
            this.phase = 'complete';
            break;
          }
          case 'complete':
            this.o.run.usage = this.tally.usage();
            this.phase = 'final';
            if (this.o.includeUsage) return this.tally.usageOut();
            break;
          case 'final':
            this.o.run.streamOutcome = this.o.run.resumed ? 'resumed' : 'completed';
            this.end(true);
            return STREAM_END;
          case 'resuming':
            return null;
          case 'over':
            if (this.failure) {
              const { err } = this.failure;
              this.failure = undefined;
              throw err;
            }
            return STREAM_END;
        }
      }
    } catch (raw) {
      return this.failed(raw);
    }
  }

  /** Resolves (never rejects) when `read` may have more: upstream data, or a resume settled. */
  wait(): Promise<void> {
    if (this.phase === 'resuming') return this.resuming!;
    if (this.phase !== 'upstream') return Promise.resolve();
    return this.src!.ready();
  }

  /** `wait` without a promise between two upstream events (the server's SSE writer); `wake` runs once, never synchronously. */
  notify(wake: () => void): void {
    const src = this.phase === 'upstream' ? notifying(this.src) : undefined;
    if (src !== undefined) src.notify(wake);
    // `wait` should never reject; if a resume's handlers threw, the stream ends with that
    // error rather than hang with nobody woken (and the rejection unhandled).
    else
      void this.wait().then(wake, (err: unknown) => {
        if (this.phase !== 'over') this.failLater(err);
        wake();
      });
  }

  /**
   * The consumer cannot take more yet (backpressure: the client's socket is full) after
   * a `read` that found nothing ready: until its next `read` the stall timer is paused,
   * as while it holds a chunk. Otherwise a client that stopped reading for longer than
   * idleTimeoutMs made a healthy upstream look stalled (the stream broke or resumed, and
   * the deployment took a breaker failure).
   */
  pause(): void {
    if (this.holding || this.phase !== 'upstream') return;
    this.cur.scope.hold();
    this.holding = true;
    this.restartOnRelease = true;
  }

  /** The consumer stopped early (client gone): release the upstream and end the stream. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.phase === 'final') {
      // Stopped right after the usage chunk: the answer was complete.
      this.o.run.streamOutcome = this.o.run.resumed ? 'resumed' : 'completed';
      this.end(true);
    } else if (this.phase !== 'over') this.end(false);
  }

  [Symbol.asyncIterator](): AsyncIterator<ChatCompletionChunk> {
    if (this.iterated) throw new Error('a LiveStream can be iterated once');
    this.iterated = true;
    return {
      next: async (): Promise<IteratorResult<ChatCompletionChunk>> => {
        for (;;) {
          const c = this.read();
          if (c === STREAM_END) return { value: undefined, done: true };
          if (c !== null) return { value: c, done: false };
          await this.wait();
        }
      },
      return: async (): Promise<IteratorResult<ChatCompletionChunk>> => {
        this.close();
        return { value: undefined, done: true };
      },
    };
  }

  /** Hand a chunk to the consumer: while it holds it (a slow client, backpressure) the stall timer may not fire. */
  private hand(chunk: ChatCompletionChunk): ChatCompletionChunk {
    this.cur.scope.hold();
    this.holding = true;
    this.restartOnRelease = this.tally.progressed;
    return chunk;
  }

  /** The current attempt threw: finish on a complete answer, resume, or end the stream with the error. */
  private failed(raw: unknown): null {
    const run = this.o.run;
    if (this.phase === 'over') throw raw;
    this.upstreamDone = true;
    const err = normalizeFailure(raw, this.cur.candidate.deployment.provider);
    // The client gone stays an abort; the shutdown (or a deadline) ends the stream with its error event.
    if (err instanceof AttemptAborted) return this.fail(asAnswer(err));
    if (this.tally.finished) {
      // The answer was complete; only its epilogue (usage, [DONE]) went missing.
      this.closeAttempt();
      this.phase = 'complete';
      return null;
    }
    this.o.health.failure(this.cur.candidate.deployment.stateKey, false);
    const trace = this.cur.trace;
    trace.errorType = err.category;
    trace.message = `after commit: ${err.label}`;
    // What reached the client, read before closing the attempt resets its count (without resume nothing else keeps it).
    const delivered = this.tally.sentChars;
    this.closeAttempt();
    // The broken attempt is over: its timer and its link to the request signal go now, not at the end.
    this.cur.scope.dispose();
    const note = this.resumeBlocker(this.resumes);
    if (note) return this.fail(new StreamBrokenError(err, delivered, note));
    this.resumes++;
    this.phase = 'resuming';
    this.resuming = this.o.resume(this.tally.delivered(), this.tally.usage().completion_tokens).then(
      (next) => {
        this.resuming = undefined;
        if (this.closed) {
          // The consumer left while the continuation was being opened: release it too. It
          // reached its upstream (it committed), so its capacity is spent, not given back.
          void next.value.iterator.return?.(undefined)?.catch(() => {});
          next.scope.dispose();
          next.lease?.reconcile(undefined, next.value.stream.headers);
          this.o.onAttemptEnd(next);
          return;
        }
        this.cur = next;
        run.resumed = true;
        this.tally.continueAnswer(this.o.stop);
        this.upstreamDone = false;
        this.startAttempt();
      },
      (resumeErr: unknown) => {
        this.resuming = undefined;
        if (this.closed) return;
        // A candidate refusing the prefill is not the story: the cut is.
        // The client gone or the shutdown ends it as such (a resume's executor answers the shutdown as a GatewayError already).
        const ended = resumeErr instanceof AttemptAborted || (resumeErr instanceof GatewayError && resumeErr.code === 'shutting_down');
        this.failLater(ended ? asAnswer(resumeErr) : new StreamBrokenError(err, this.tally.deliveredChars, 'no candidate could continue it'));
      },
    );
    return null;
  }

  /** End the stream with `err`: thrown now. */
  private fail(err: unknown): never {
    this.failLater(err);
    this.phase = 'over';
    const f = this.failure!;
    this.failure = undefined;
    throw f.err;
  }

  /** End the stream with `err`, thrown by the next `read`. */
  private failLater(err: unknown): void {
    const run = this.o.run;
    const clientLeft = err instanceof AttemptAborted && err.kind === 'client';
    run.streamOutcome = clientLeft ? 'client_aborted' : 'broken';
    if (clientLeft) this.markAborted();
    if (err instanceof GatewayError) run.errorCode = err.code;
    // The attempt's usage first, so the request's usage includes it.
    if (!this.attemptClosed) this.closeAttempt();
    run.usage = this.tally.usage();
    this.failure = { err };
    this.end(false);
  }

  /** The stream is over (once): release or drain the upstream, settle the request. */
  private end(ok: boolean): void {
    if (this.phase === 'over') return;
    this.phase = 'over';
    if (this.holding) {
      this.holding = false;
      this.cur.scope.release();
    }
    const run = this.o.run;
    const { scope } = this.cur;
    const { iterator } = this.cur.value;
    // An answer ended at a stop across the cut: its upstream writes on past the stop, so it is let go, not read to its end.
    if (ok && !this.upstreamDone && !this.tally.stoppedAtCut) {
      // The answer is complete, but the upstream's body is not: `[DONE]` and the
      // body's end normally follow at once. Read them in the background, within
      // the grace period, rather than abandon the body mid-way — that costs the
      // keep-alive connection (a new TCP connection for a later request) and
      // two errors with stack traces, on every stream.
      scope.arm(FINISH_GRACE_MS, 'idle', 'upstream did not end its stream');
      const src = notifying(this.src);
      if (src !== undefined) drainPull(src, scope);
      else void drain(iterator, this.src instanceof IteratorPull ? this.src.inFlight : undefined).finally(() => scope.dispose());
    } else {
      // Release the upstream whatever happened (client gone, failure). A no-op if it ended.
      void iterator.return?.(undefined)?.catch(() => {});
      scope.dispose();
    }
    if (!ok) {
      // Ended mid-attempt (the client left, the deadline, a failure): the attempt still
      // used its upstream, so its usage counts and its capacity is settled, not left in flight.
      if (!this.attemptClosed) {
        if (this.closed) this.markAborted(); // the consumer let go: the client left
        this.closeAttempt();
      }
      run.streamOutcome ??= 'client_aborted';
      run.usage ??= this.tally.usage();
    }
    this.o.onEnd();
  }

  private resumeBlocker(resumes: number): string | null {
    if (!this.o.cfg.streamResume) return 'stream resume is disabled';
    if (this.tally.toolCalls) return 'tool-call streams are not resumed';
    // A prefill continues one answer: the others of an n > 1 request cannot be.
    if (this.o.choices > 1) return 'streams of several choices are not resumed';
    if (this.tally.deliveredChars === 0) return 'nothing to resume from';
    if (resumes >= MAX_RESUMES) return `gave up after ${MAX_RESUMES} resumes`;
    return null;
  }

  /** The client left while this attempt was streaming: its trace (and metric) says so, not success. */
  private markAborted(): void {
    const trace = this.cur.trace;
    if (trace.errorType === null) {
      trace.errorType = 'aborted';
      trace.message = 'the client left mid-stream';
    }
  }

  /** The attempt is over: count its usage and malformed events, settle its capacity lease. */
  private closeAttempt(): void {
    if (this.attemptClosed) return;
    this.attemptClosed = true;
    const c = this.cur;
    this.o.run.malformedEvents += c.value.stream.malformed;
    c.lease?.reconcile(this.tally.closeAttempt(this.o.promptTokensEstimate), c.value.stream.headers);
    // Each attempt at its own deployment's price: a resume may continue on another one.
    const t = this.tally;
    const cost = costUsd(c.candidate.deployment.price, { promptTokens: t.lastPrompt, completionTokens: t.lastCompletion, cachedTokens: t.lastCached, cacheWriteTokens: t.lastCacheWrite });
    this.o.run.addAttemptCost(cost);
    // And for the metrics, which credit it to this attempt's deployment, not the request's last.
    this.o.onAttemptEnd(c, { promptTokens: t.lastPrompt, completionTokens: t.lastCompletion, costUsd: cost });
  }
}

/** A source that can wake its reader without a promise (an OpenAI-format stream). */
type Notifying = ChunkPull & { notify(wake: () => void): void };
const notifying = (src: ChunkPull | IteratorPull<ChatCompletionChunk> | undefined): Notifying | undefined =>
  src !== undefined && !(src instanceof IteratorPull) && src.notify !== undefined ? (src as Notifying) : undefined;

/**
 * `drain` for a stream read pull-style: no async frame or promise waits with
 * it for the upstream's last bytes (every stream ends this way, thousands at
 * a time under load, and those would outlive a young-generation cycle).
 */
function drainPull(src: Notifying, scope: { dispose(): void }): void {
  const step = (): void => {
    try {
      for (;;) {
        const r = src.pull();
        if (r === PULL_END) break;
        if (r === undefined) return src.notify(step);
      }
    } catch {
      // Ended all the same: the stream released the socket when it threw.
    }
    scope.dispose();
  };
  step();
}

/** Read an upstream to its end, ignoring what it says; a failure (the grace timer's abort included) ends it too. */
async function drain(iterator: AsyncIterator<unknown>, inFlight: Promise<void> | undefined): Promise<void> {
  try {
    await inFlight;
    while (!(await iterator.next()).done);
  } catch {
    // Ended all the same: the adapter released the socket when it threw.
  }
}
