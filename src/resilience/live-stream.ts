/**
 * A committed stream: what the client iterates after the commit point.
 *
 * Why this is more than a pass-through: after the first token the gateway can
 * no longer fail over silently, and the easy mistakes are all here — a stream
 * cut mid-answer presented as finished, a stalled upstream hanging the client,
 * usage that counts the wrong attempts. So: a stall timer re-armed per chunk
 * (a refresh, no allocation); a cut or stall before `finish_reason` is a
 * failure, never an end; with `streamResume` the text delivered so far is sent
 * back as an assistant prefill and the continuation is streamed on in the same
 * response; otherwise the iterator throws StreamBrokenError (the server writes
 * it as an OpenAI-style error event). After a `finish_reason` the answer is
 * complete: a missing `[DONE]` or usage chunk only costs a short grace period.
 */
import type { ResilienceConfig } from '../config/types.js';
import { GatewayError } from '../core/errors.js';
import type { ChatCompletionChunk, Usage } from '../protocol/openai.js';
import { RAW_JSON, type WithRaw } from '../providers/types.js';
import { AttemptAborted } from './abort.js';
import type { Attempted } from './executor.js';
import type { Health } from './health.js';
import { normalizeFailure } from './outcome.js';
import type { RequestRun } from './run.js';
import type { Committed } from './stream-attempt.js';
import type { UpstreamError } from './upstream-error.js';

/** How long to wait for a usage chunk / clean close after `finish_reason`. */
const FINISH_GRACE_MS = 1000;
const MAX_RESUMES = 3;
const DELIVERED_JOIN_EVERY = 64;

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
  promptTokensEstimate: number;
  /** Continue after a cut: resolves with a committed continuation, or rejects. */
  resume(prefill: string): Promise<Attempted<Committed>>;
  /** Called once, when the stream is over for whatever reason. */
  onEnd(): void;
}

export class LiveStream implements AsyncIterable<ChatCompletionChunk> {
  private cur: Attempted<Committed>;
  private readonly id: string;
  /** Content delivered so far, for a resume's prefill: pieces joined only when needed (a rope of thousands of tiny strings costs more). */
  private deliveredParts: string[] = [];
  private deliveredChars = 0;
  /** deliveredParts before this index are joined blocks. */
  private joinedParts = 0;
  private attemptChars = 0;
  private toolCalls = false;
  private finished = false;
  private usageChunk: WithRaw<ChatCompletionChunk> | undefined;
  private attemptUsage: Usage | undefined;
  private readonly totals = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  private attemptsCounted = 0;
  private continuation = false;
  private lastModel: string;
  private created: number;
  private started = false;

  constructor(first: Attempted<Committed>, private readonly o: LiveStreamOptions) {
    this.cur = first;
    const head = first.value.pending[0];
    this.id = head?.id ?? `chatcmpl-${o.run.id}`;
    this.lastModel = head?.model ?? first.candidate.deployment.model;
    this.created = head?.created ?? Math.floor(o.run.startedAt / 1000);
  }

  /** The text delivered so far, as one string (kept joined from then on). */
  private delivered(): string {
    const text = this.deliveredParts.join('');
    this.deliveredParts = [text];
    this.joinedParts = 1;
    return text;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    if (this.started) throw new Error('a LiveStream can be iterated once');
    this.started = true;
    const { run } = this.o;
    let resumes = 0;
    let ok = false;
    /** The current attempt's upstream iterator has ended (or thrown). */
    let upstreamDone = false;
    try {
      for (;;) {
        const { scope } = this.cur;
        const c = this.cur.value;
        scope.arm(this.cur.candidate.deployment.timeouts.idleTimeoutMs, 'idle', 'upstream stream stalled');
        let graceArmed = false;
        try {
          for (const chunk of c.pending) {
            const out = this.process(chunk);
            if (out) {
              // While the consumer holds a chunk (a slow client, backpressure) the stall timer may not fire.
              scope.hold();
              yield out;
              scope.release();
            }
          }
          c.pending.length = 0;
          upstreamDone = c.ended;
          if (!c.ended) {
            while (!(this.finished && this.attemptUsage)) {
              const r = await c.iterator.next();
              if (r.done) {
                upstreamDone = true;
                break;
              }
              scope.refresh();
              const out = this.process(r.value);
              if (out) {
                scope.hold();
                yield out;
                scope.release();
              }
              if (this.finished && !graceArmed) {
                graceArmed = true;
                scope.arm(FINISH_GRACE_MS, 'idle', 'no usage after finish_reason');
              }
            }
          }
          this.closeAttempt();
          break;
        } catch (raw) {
          upstreamDone = true;
          const err = normalizeFailure(raw);
          if (err instanceof AttemptAborted) throw err;
          if (this.finished) {
            // The answer was complete; only its epilogue (usage, [DONE]) went missing.
            this.closeAttempt();
            break;
          }
          this.o.health.failure(this.cur.candidate.deployment.stateKey, false);
          const trace = run.attempts[run.attempts.length - 1];
          if (trace) {
            trace.errorType = err.category;
            trace.message = `after commit: ${err.label}`;
          }
          this.closeAttempt();
          // The broken attempt is over: its timer and its link to the request signal go now, not at the end.
          this.cur.scope.dispose();
          const note = this.resumeBlocker(resumes);
          if (note) throw new StreamBrokenError(err, this.deliveredChars || this.attemptChars, note);
          resumes++;
          try {
            this.cur = await this.o.resume(this.delivered());
          } catch (resumeErr) {
            if (resumeErr instanceof AttemptAborted) throw resumeErr;
            // A candidate refusing the prefill is not the story: the cut is.
            throw new StreamBrokenError(err, this.deliveredChars, 'no candidate could continue it');
          }
          run.resumed = true;
          this.continuation = true;
        }
      }
      ok = true;
      run.usage = { ...this.totals };
      if (this.o.includeUsage) yield this.usageOut();
      run.streamOutcome = run.resumed ? 'resumed' : 'completed';
    } catch (err) {
      run.streamOutcome = err instanceof AttemptAborted && err.kind === 'client' ? 'client_aborted' : 'broken';
      if (err instanceof GatewayError) {
        run.errorCode = err.code;
      }
      run.usage = { ...this.totals };
      throw err;
    } finally {
      const { scope } = this.cur;
      const { iterator } = this.cur.value;
      if (ok && !upstreamDone) {
        // The answer is complete, but the upstream's body is not: `[DONE]` and the
        // body's end normally follow at once. Read them in the background, within
        // the grace period, rather than abandon the body mid-way — that costs the
        // keep-alive connection (a new TCP connection for a later request) and
        // two errors with stack traces, on every stream.
        scope.arm(FINISH_GRACE_MS, 'idle', 'upstream did not end its stream');
        void drain(iterator).finally(() => scope.dispose());
      } else {
        // Release the upstream whatever happened (client gone, failure). A no-op if it ended.
        void iterator.return?.(undefined)?.catch(() => {});
        scope.dispose();
      }
      if (!ok) {
        run.streamOutcome ??= 'client_aborted';
        run.usage ??= { ...this.totals };
      }
      this.o.onEnd();
    }
  }

  private resumeBlocker(resumes: number): string | null {
    if (!this.o.cfg.streamResume) return 'stream resume is disabled';
    if (this.toolCalls) return 'tool-call streams are not resumed';
    if (this.deliveredChars === 0) return 'nothing to resume from';
    if (resumes >= MAX_RESUMES) return `gave up after ${MAX_RESUMES} resumes`;
    return null;
  }

  /** Bookkeeping for one chunk; returns what to send the client, if anything. */
  private process(chunk: WithRaw<ChatCompletionChunk>): ChatCompletionChunk | undefined {
    const choices = chunk.choices;
    if (chunk.usage) this.attemptUsage = chunk.usage;
    if (choices.length === 0) {
      // The usage-only chunk is held until the end: the total may span attempts.
      if (chunk.usage) {
        this.usageChunk = chunk;
        return undefined;
      }
      return chunk;
    }
    let content = false;
    for (let i = 0; i < choices.length; i++) {
      const ch = choices[i]!;
      const d = ch.delta;
      if (d) {
        if (typeof d.content === 'string' && d.content.length > 0) {
          content = true;
          this.attemptChars += d.content.length;
          if (this.o.cfg.streamResume && ch.index === 0) {
            this.deliveredParts.push(d.content);
            // Every so many tiny pieces become one (never the whole text again: that would copy it over and over).
            if (this.deliveredParts.length - this.joinedParts >= DELIVERED_JOIN_EVERY) {
              this.deliveredParts.push(this.deliveredParts.splice(this.joinedParts).join(''));
              this.joinedParts = this.deliveredParts.length;
            }
            this.deliveredChars += d.content.length;
          }
        }
        if (d.tool_calls && d.tool_calls.length > 0) {
          content = true;
          this.toolCalls = true;
        }
        if (this.continuation && d.role) delete d.role;
      }
      if (ch.finish_reason) {
        content = true;
        this.finished = true;
      }
    }
    this.lastModel = chunk.model ?? this.lastModel;
    if (this.continuation) {
      if (!content) return undefined;
      // One response, one id: continuation chunks are re-labelled (and so re-serialised).
      chunk.id = this.id;
      delete chunk[RAW_JSON];
    }
    return chunk;
  }

  /** Add this attempt's usage (reported, or counted when the upstream sent none) to the totals. */
  private closeAttempt(): void {
    const run = this.o.run;
    run.malformedEvents += this.cur.value.stream.malformed;
    const u = this.attemptUsage;
    const prompt = u ? u.prompt_tokens : this.o.promptTokensEstimate + (this.continuation ? Math.ceil(this.deliveredChars / 4) : 0);
    const completion = u ? u.completion_tokens : Math.ceil(this.attemptChars / 4);
    this.totals.prompt_tokens += prompt;
    this.totals.completion_tokens += completion;
    this.totals.total_tokens += prompt + completion;
    this.attemptsCounted++;
    this.cur.lease?.reconcile(prompt + completion, this.cur.value.stream.headers);
    this.attemptUsage = undefined;
    this.attemptChars = 0;
  }

  private usageOut(): ChatCompletionChunk {
    if (this.attemptsCounted === 1 && this.usageChunk) return this.usageChunk;
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.lastModel,
      choices: [],
      usage: { ...this.totals },
    };
  }
}

/** Read an upstream to its end, ignoring what it says; a failure (the grace timer's abort included) ends it too. */
async function drain(iterator: AsyncIterator<unknown>): Promise<void> {
  try {
    while (!(await iterator.next()).done);
  } catch {
    // Ended all the same: the adapter released the socket when it threw.
  }
}
