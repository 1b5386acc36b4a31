/**
 * What a committed stream has said so far, across its attempts: the text
 * delivered (a resume's prefill), whether the answer finished or called tools,
 * its usage (reported, or counted when an attempt reported none), and the
 * relabelling that makes a continuation's chunks part of one response.
 */
import type { ChatCompletionChunk, Usage } from '../protocol/openai.js';
import { RAW_JSON, type WithRaw } from '../providers/types.js';

/** Delivered text is joined every so many pieces: a long answer as thousands of tiny strings costs more memory than its text. */
const JOIN_EVERY = 64;

export class StreamTally {
  /** Characters of content delivered (index 0, kept for a resume); 0 when resume is off. */
  deliveredChars = 0;
  /** Characters of content in the current attempt, whatever the choice. */
  attemptChars = 0;
  toolCalls = false;
  /** A finish_reason was seen: the answer is complete, whatever follows. */
  finished = false;
  /** Chunks from here on continue an earlier attempt's answer. */
  continuation = false;
  /** deliveredParts before this index are joined blocks. */
  private deliveredParts: string[] = [];
  private joinedParts = 0;
  private usageChunk: WithRaw<ChatCompletionChunk> | undefined;
  private attemptUsage: Usage | undefined;
  private readonly totals = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  private attemptsCounted = 0;

  constructor(
    /** The response's one id (continuation chunks are relabelled with it). */
    private readonly id: string,
    private lastModel: string,
    private readonly created: number,
    /** Keep the delivered text (stream resume is on). */
    private readonly keepText: boolean,
  ) {}

  /** The answer finished and its usage arrived: nothing more to read from this attempt. */
  get complete(): boolean {
    return this.finished && this.attemptUsage !== undefined;
  }

  /** The totals so far, as the request's usage. */
  usage(): Usage {
    return { ...this.totals };
  }

  /** Bookkeeping for one chunk; returns what to send the client, if anything. */
  take(chunk: WithRaw<ChatCompletionChunk>): ChatCompletionChunk | undefined {
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
          if (this.keepText && ch.index === 0) this.keep(d.content);
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

  private keep(text: string): void {
    this.deliveredParts.push(text);
    // Every so many pieces become one block (never the whole text again: that would copy it over and over).
    if (this.deliveredParts.length - this.joinedParts >= JOIN_EVERY) {
      this.deliveredParts.push(this.deliveredParts.splice(this.joinedParts).join(''));
      this.joinedParts = this.deliveredParts.length;
    }
    this.deliveredChars += text.length;
  }

  /** The text delivered so far, as one string (kept joined from then on). */
  delivered(): string {
    const text = this.deliveredParts.join('');
    this.deliveredParts = [text];
    this.joinedParts = 1;
    return text;
  }

  /**
   * The attempt is over: add its usage (reported, or counted from the text when
   * the upstream sent none) to the totals; returns its tokens.
   */
  closeAttempt(promptTokensEstimate: number): number {
    const u = this.attemptUsage;
    const prompt = u ? u.prompt_tokens : promptTokensEstimate + (this.continuation ? Math.ceil(this.deliveredChars / 4) : 0);
    const completion = u ? u.completion_tokens : Math.ceil(this.attemptChars / 4);
    this.totals.prompt_tokens += prompt;
    this.totals.completion_tokens += completion;
    this.totals.total_tokens += prompt + completion;
    this.attemptsCounted++;
    this.attemptUsage = undefined;
    this.attemptChars = 0;
    return prompt + completion;
  }

  /** The usage chunk for the client: the upstream's own when one attempt served it all. */
  usageOut(): ChatCompletionChunk {
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
