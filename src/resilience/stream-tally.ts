/**
 * What a committed stream has said so far, across its attempts: the text
 * delivered (a resume's prefill), whether the answer finished or called tools
 * (a legacy function too), its usage (reported, or counted when an attempt
 * reported none), and the relabelling that makes a continuation's chunks part of one response — with
 * the check for a stop sequence split by the cut (stop-across-cut.ts).
 */
import type { ChatCompletionChunk, ChunkChoice, ToolCallDelta, Usage } from '../protocol/openai.js';
import { textTokens } from '../protocol/text-weight.js';
import { callChars, callTokens, tokenCount } from '../protocol/token-count.js';
import { RAW_JSON, type WithRaw } from '../providers/types.js';
import { HOLD, STOP, StopAcrossCut, longestStop } from './stop-across-cut.js';
import { UpstreamError } from './upstream-error.js';

/** First size of the delivered-text buffer, in bytes (UTF-16: two a character). */
const TEXT_START_BYTES = 256;

export class StreamTally {
  /** Characters of content delivered (index 0, kept for a resume); 0 when resume is off. */
  deliveredChars = 0;
  /** Characters of content and tool calls (names, arguments) in the current attempt, whatever the choice. */
  attemptChars = 0;
  /**
   * The same text weighed in tokens (text-weight.ts), unrounded: the completion when the
   * upstream reports no usage. Weighed as it passes, since whether usage comes is known only
   * at the end and the text is not kept: one native byte count a piece (tens of ns).
   */
  private attemptTokens = 0;
  toolCalls = false;
  /**
   * The last chunk taken moved the answer on: text, a refusal, reasoning, a tool or function
   * call, a finish_reason or usage. The stall timer restarts only on those (live-stream.ts): an
   * upstream sending chunks with nothing in them (`delta: {}`, an empty text, a role again)
   * would otherwise hold a stream open for ever while its client got nothing.
   */
  progressed = false;
  /** Every answer asked for has its finish_reason: the response is complete, whatever follows. */
  finished = false;
  /** With n > 1: the choice indexes that finished so far. */
  private finishedChoices: Set<number> | undefined;
  /** Chunks from here on continue an earlier attempt's answer. */
  continuation = false;
  /**
   * The continuation completed a stop sequence begun before the cut: the answer ended there
   * (finish_reason `stop`), whatever its upstream says next.
   */
  stoppedAtCut = false;
  /** While a continuation may yet complete a stop sequence begun before the cut (see StopAcrossCut). */
  private seam: StopAcrossCut | undefined;
  /**
   * The delivered text as UTF-16 code units, off the JS heap. Kept as strings,
   * every content piece lived as long as its stream — with thousands of slow
   * streams, each event's piece survived two scavenges and was promoted (the
   * largest thing the GC copied under the 2,000-stream hold). UTF-16 keeps the
   * text exactly, a surrogate pair split across two chunks included.
   */
  private text: Buffer | undefined;
  private textBytes = 0;
  private usageChunk: WithRaw<ChatCompletionChunk> | undefined;
  private attemptUsage: Usage | undefined;
  private readonly totals = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  private attemptsCounted = 0;

  constructor(
    /** The response's one id (continuation chunks are relabelled with it). */
    private readonly id: string,
    private lastModel: string,
    /** The response's one `created` (continuation chunks are relabelled with it too). */
    private readonly created: number,
    /** Keep the delivered text (stream resume is on). */
    private readonly keepText: boolean,
    /** How many answers the request asked for (`n`). */
    private readonly choices = 1,
  ) {}

  /**
   * Characters the client got so far, for a broken stream's message: the kept text of a
   * resumable answer (across its attempts), else this attempt's count — several choices are
   * never resumed, and only choice 0's text is kept.
   */
  get sentChars(): number {
    return this.choices > 1 ? this.attemptChars : this.deliveredChars || this.attemptChars;
  }

  /** The answer finished and its usage arrived (or it ended at a stop across the cut): nothing more to read from this attempt. */
  get complete(): boolean {
    return this.finished && (this.attemptUsage !== undefined || this.stoppedAtCut);
  }

  /**
   * Chunks from here on continue the answer delivered so far (a resume committed). `stops`:
   * the request's stop sequences that can span a cut (`seamStops`), checked at the seam
   * when the delivered text ends with the start of one; undefined, or an end that starts
   * none, leaves the continuation unchecked.
   */
  continueAnswer(stops: readonly string[] | undefined): void {
    this.continuation = true;
    // A broken continuation's held text was never delivered: the next starts from the same seam.
    this.seam = stops === undefined ? undefined : StopAcrossCut.after(this.tail(longestStop(stops) - 1), stops);
  }

  /** One choice finished; with n > 1 the response is complete only once each of them has. */
  private finish(index: unknown): void {
    if (this.choices <= 1) {
      this.finished = true;
      return;
    }
    const done = (this.finishedChoices ??= new Set());
    if (typeof index === 'number') done.add(index);
    if (done.size >= this.choices) this.finished = true;
  }

  /** The totals so far, as the request's usage. */
  usage(): Usage {
    return { ...this.totals };
  }

  /** Bookkeeping for one chunk; returns what to send the client, if anything. */
  take(chunk: WithRaw<ChatCompletionChunk>): ChatCompletionChunk | undefined {
    const choices = chunk.choices;
    if (chunk.usage) this.attemptUsage = chunk.usage;
    // `progressed` is set once on each way out: usage is progress, and so is what the loop finds.
    if (choices.length === 0) {
      this.progressed = chunk.usage != null;
      // The usage-only chunk is held until the end: the total may span attempts.
      if (chunk.usage) {
        this.usageChunk = chunk;
        return undefined;
      }
      // Nothing of the answer (an Azure prompt_filter_results chunk): a continuation's, under its own id, is dropped.
      return this.continuation ? undefined : chunk;
    }
    // The answer ended at its finish_reason (with n > 1, every choice's): whatever a server sends for
    // it after that reached the client behind the finish chunk, which every client takes for the end.
    if (this.finished) {
      this.progressed = chunk.usage != null;
      return undefined;
    }
    // Only a continuation whose prefill ends with the start of a stop sequence: one field test otherwise.
    // Its one choice (several are never resumed) is checked at the seam before it is counted or kept.
    if (this.seam !== undefined && !this.atSeam(choices[0]!)) {
      this.progressed = true; // held back, but text all the same (atSeam holds only a piece that has some)
      return undefined;
    }
    const usage = chunk.usage != null;
    // Rewritten (and serialised) before anything of it is counted or kept: one that cannot be
    // relayed fails the attempt, and its text must be in neither the resume's prefill nor the finish.
    if (this.continuation || usage) this.rewrite(chunk);
    let content = false;
    /** Reasoning beside the answer: progress, but not `content` (a continuation passes on none, as before). */
    let reasoning = false;
    for (let i = 0; i < choices.length; i++) {
      const ch = choices[i]!;
      const d = ch.delta;
      if (d) {
        const piece = d.content;
        const text = typeof piece === 'string' && piece.length > 0;
        if (text) {
          content = true;
          this.attemptChars += piece.length;
          this.attemptTokens += textTokens(piece);
          if (this.keepText && ch.index === 0) this.keep(piece);
        }
        // Upstream JSON, checked as such: `tool_calls: [null]` or an object in its place threw
        // here, and a healthy stream ended as broken (the chunk itself still goes out as it came).
        if (Array.isArray(d.tool_calls) && d.tool_calls.length > 0) {
          content = true;
          this.toolCalls = true;
          // Generated tokens too: counted like content when the upstream reports no usage.
          for (const tc of d.tool_calls as unknown[]) {
            if (tc !== null && typeof tc === 'object') this.countCall((tc as ToolCallDelta).function);
          }
        } else if (!text) {
          // A legacy function_call, a tool call all the same (not resumed, its text counted). Its
          // deltas carry no text, so a text chunk — nearly every chunk — skips this read.
          const fn = d.function_call as unknown;
          if (fn !== null && typeof fn === 'object') {
            content = true;
            this.toolCalls = true;
            this.countCall(fn);
          } else {
            const r = reasoningOf(d);
            if (r !== undefined) {
              reasoning = true;
              // Generated and billed as output too: counted like content when the upstream reports no usage.
              this.attemptTokens += textTokens(r);
            }
          }
        }
        // A refusal is the answer too (as at the commit point): a continuation's was dropped unseen.
        if (typeof d.refusal === 'string' && d.refusal.length > 0) content = true;
      }
      if (ch.finish_reason) {
        content = true;
        this.finish(ch.index);
      }
    }
    this.progressed = content || reasoning || usage;
    // Kept only when it changed: each chunk's own copy of the same name would outlive the wait for the next.
    // Only a name: a chunk relayed as it came may carry anything there, and the usage chunk the gateway
    // writes with it could not be serialised from an array nested some thousands deep (the stream failed).
    const model = chunk.model;
    if (typeof model === 'string' && model !== this.lastModel) this.lastModel = model;
    if (this.continuation && !content) return undefined;
    return chunk;
  }

  /**
   * A chunk with choices that cannot go out as it came, re-serialised here as its raw text:
   * - a continuation's: one response, one id and one creation time, and no second role.
   *   Another deployment's adapter stamps its own `created`, and a client that keeps the last
   *   chunk's fields (the openai SDK's stream helper) saw the time jump mid-answer.
   * - usage beside choices (vLLM and other OpenAI-compatible servers put it on the finish
   *   chunk): the gateway's to report, as every other usage is, on the usage-only chunk at the
   *   end when the client asked (include_usage), summing every attempt. Passed on, a client that
   *   asked read two usage objects and one that did not read one anyway (the gateway always asks
   *   its upstream). Once a stream.
   * Serialised here, not by the SSE writer: an upstream member nested some thousands deep
   * (JSON.parse reads any depth) overflows JSON.stringify's stack, and that is the upstream's
   * fault, failing its attempt (resumed, or a stream_broken naming it) — in the writer it was
   * an unclassified stream_error, traced as the client leaving.
   */
  private rewrite(chunk: WithRaw<ChatCompletionChunk>): void {
    if (this.continuation) {
      chunk.id = this.id;
      chunk.created = this.created;
      const choices = chunk.choices;
      for (let i = 0; i < choices.length; i++) {
        const d = choices[i]!.delta;
        if (d && d.role) delete d.role;
      }
    }
    if (chunk.usage != null) chunk.usage = null;
    try {
      chunk[RAW_JSON] = JSON.stringify(chunk);
    } catch {
      throw new UpstreamError({ category: 'server', message: 'upstream sent a chunk too deeply nested to relay' });
    }
  }

  /**
   * A continuation chunk while a stop sequence may span the seam: false to hold it back. Else
   * it goes on as the loop in `take` reads it, rewritten when the check ends on it: as the
   * finish at the stop (its text and any after it dropped), or with the held text ahead of its own.
   */
  private atSeam(ch: ChunkChoice): boolean {
    const seam = this.seam!;
    const d = ch.delta as ChunkChoice['delta'] | null | undefined;
    const piece = d != null && typeof d.content === 'string' ? d.content : '';
    if (piece.length === 0 && !ch.finish_reason) {
      // A role chunk: through as it is, the text still held. A tool call or a refusal ends the
      // text a stop sequence could run on in: the held text goes out first, in this chunk.
      if (d == null || (d.tool_calls == null && d.refusal == null && d.function_call == null)) return true;
      this.seam = undefined;
      if (seam.held.length > 0) d.content = seam.held;
      return true;
    }
    // A bare finish ends the check as a piece that completes no sequence would.
    const verdict = piece.length > 0 ? seam.feed(piece) : HOLD;
    if (verdict === HOLD && !ch.finish_reason) return false;
    this.seam = undefined;
    if (verdict === STOP) {
      // Generated all the same: counted as an attempt's text is when its upstream reports no usage.
      this.countHeld(seam.held);
      ch.delta = {};
      ch.finish_reason = 'stop';
      if (ch.logprobs != null) ch.logprobs = null;
      this.stoppedAtCut = true;
      return true;
    }
    // No stop after all, or the answer ended first: what was held goes out now, in this chunk
    // (a bare finish with nothing held stays as it came).
    if (seam.held.length === 0) return true;
    if (d != null) d.content = seam.held;
    else ch.delta = { content: seam.held };
    return true;
  }

  /**
   * Text held at the seam when the continuation ended without a finish_reason (an upstream
   * that sends `[DONE]` without one), as a chunk of its own; undefined when none is held.
   */
  heldOut(): ChatCompletionChunk | undefined {
    const seam = this.seam;
    if (seam === undefined) return undefined;
    this.seam = undefined;
    if (seam.held.length === 0) return undefined;
    return this.take({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.lastModel, choices: [{ index: 0, delta: { content: seam.held }, finish_reason: null }] });
  }

  /** The last `chars` characters (at most) of the delivered text. */
  private tail(chars: number): string {
    if (this.text === undefined || chars <= 0) return '';
    return this.text.toString('utf16le', Math.max(0, this.textBytes - chars * 2), this.textBytes);
  }

  private keep(piece: string): void {
    const end = this.textBytes + piece.length * 2;
    if (this.text === undefined || end > this.text.length) {
      // Its own memory (not the shared pool), grown by doubling.
      const grown = Buffer.allocUnsafeSlow(Math.max(TEXT_START_BYTES, end * 2));
      this.text?.copy(grown, 0, 0, this.textBytes);
      this.text = grown;
    }
    this.text.write(piece, this.textBytes, 'utf16le');
    this.textBytes = end;
    this.deliveredChars += piece.length;
  }

  /** The text delivered so far, as one string. */
  delivered(): string {
    return this.text === undefined ? '' : this.text.toString('utf16le', 0, this.textBytes);
  }

  /**
   * The attempt is over: add its usage (reported, or counted from the text when
   * the upstream sent none) to the totals; returns its tokens.
   */
  /** The last closed attempt's counts, as added to the totals (priced at its own deployment's price). */
  lastPrompt = 0;
  lastCompletion = 0;
  /** Of lastPrompt, the cache hits its upstream reported (none when the gateway counted the prompt itself). */
  lastCached: number | undefined = undefined;
  /** Of lastPrompt, the tokens its upstream reported written to its prompt cache. */
  lastCacheWrite: number | undefined = undefined;

  closeAttempt(promptTokensEstimate: number): number {
    // Text still held at a stop's seam (the attempt cut, or the client gone): never sent, but
    // generated all the same, as at a stop. A continuation after it checks the seam afresh.
    const seam = this.seam;
    if (seam !== undefined) {
      this.countHeld(seam.held);
      this.seam = undefined;
    }
    // A count the upstream reported is used when it is one; any other is counted here.
    const u = this.attemptUsage as Partial<Record<keyof Usage, unknown>> | undefined;
    const reportedPrompt = tokenCount(u?.prompt_tokens);
    // A continuation's prompt carries the text delivered so far, weighed as any text the gateway counts.
    const prompt = reportedPrompt ?? promptTokensEstimate + (this.continuation ? Math.ceil(textTokens(this.delivered())) : 0);
    const completion = tokenCount(u?.completion_tokens) ?? Math.ceil(this.attemptTokens);
    this.totals.prompt_tokens += prompt;
    this.totals.completion_tokens += completion;
    this.totals.total_tokens += prompt + completion;
    this.lastPrompt = prompt;
    this.lastCompletion = completion;
    // Hits are of the prompt the upstream counted: beside the gateway's own count of it (an upstream
    // that reported details but no prompt count; Anthropic's usage always has details) they are
    // none, as for a buffered answer (checkedUsage).
    this.lastCached = reportedPrompt === undefined ? undefined : tokenCount((u?.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined)?.cached_tokens);
    this.lastCacheWrite = reportedPrompt === undefined ? undefined : tokenCount(u?.cache_creation_input_tokens);
    this.attemptsCounted++;
    this.attemptUsage = undefined;
    this.attemptChars = 0;
    this.attemptTokens = 0;
    return prompt + completion;
  }

  /** A tool or legacy function call's name and arguments: generated text, counted as content is. */
  private countCall(fn: unknown): void {
    this.attemptChars += callChars(fn);
    this.attemptTokens += callTokens(fn);
  }

  /** Text held at a stop's seam and never sent: generated all the same. */
  private countHeld(held: string): void {
    this.attemptChars += held.length;
    this.attemptTokens += textTokens(held);
  }

  /**
   * The usage chunk for the client: the upstream's own when one attempt served it all and
   * its counts are counts; else the totals the gateway used (its own count for any that is not).
   */
  usageOut(): ChatCompletionChunk {
    if (this.attemptsCounted === 1 && this.usageChunk && isCounted(this.usageChunk.usage)) return this.usageChunk;
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

/**
 * Reasoning some OpenAI-compatible servers stream beside the answer, passed on as it came:
 * `reasoning_content` (DeepSeek, vLLM) or `reasoning` (OpenRouter, Ollama's /v1). Read only
 * for a chunk with no text and no call, so a text chunk never gets here.
 */
function reasoningOf(d: ChunkChoice['delta']): string | undefined {
  const r = d as { reasoning_content?: unknown; reasoning?: unknown };
  if (typeof r.reasoning_content === 'string' && r.reasoning_content.length > 0) return r.reasoning_content;
  return typeof r.reasoning === 'string' && r.reasoning.length > 0 ? r.reasoning : undefined;
}

const isCounted = (u: Usage | null | undefined): boolean =>
  u != null && tokenCount(u.prompt_tokens) !== undefined && tokenCount(u.completion_tokens) !== undefined && tokenCount(u.total_tokens) !== undefined;
