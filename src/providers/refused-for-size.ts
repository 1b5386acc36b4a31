/**
 * A rate limit's 429 that is really a refusal of the request's size. Anthropic answers with the
 * same words whether its minute is full or the request alone is larger than all of it ("This
 * request would exceed the rate limit for your organization (…) of 30,000 input tokens per
 * minute"), Gemini names its input-token quota the same way for either ("Quota exceeded for
 * metric: …input_token_count, limit: 250000"). The second is no rate limit: no wait lets that
 * request through on this deployment. Read as one, it cooled the deployment down for every other
 * client's requests, and when no other candidate served the client got a 503 inviting a retry
 * that would fail the same way. OpenAI says it outright ("Request too large … (TPM)", classify.ts);
 * here it is told by size.
 *
 * So a rate limit whose error names the deployment's input-token limit (`inputTokenLimit`, read by
 * the provider's error mapping) becomes this deployment's refusal of the request when the prompt is
 * plainly larger: its text (countedChars: whitespace runs and repeated characters folded, as
 * tokenizers fold them) at 4 characters a token (English runs ~3.5 a token with Claude's and
 * Gemini's tokenizers, code fewer, other scripts far fewer) above MARGIN times the limit: a
 * heuristic on the safe side, as a prompt it counts short stays a rate limit, as before. The refusal
 * keeps the limit (`inputTokenLimit`), by which refusedByThisModel knows it: the next candidate, no
 * cooldown, no breaker, the reserved tokens back, and a 400 when no candidate takes it. A provider
 * counts 0 for requests whose input may not all count (Anthropic's with a prompt-cache breakpoint:
 * cached input does not count towards its limit).
 *
 * The limit is then known (SizeLimits): a later prompt plainly larger is refused the same way before
 * it is sent, marked unsent, so a client that keeps sending it pays no round trip to a deployment
 * that cannot take it. Learnt limits lapse after LEARNT_MS (a tier raised meanwhile is believed
 * within it) and are bounded per adapter (model names of pinned requests are the client's).
 */
import type { Clock } from '../core/clock.js';
import { UpstreamError } from '../resilience/upstream-error.js';

/** How far over the limit the prompt must weigh before the refusal is read as "too large". */
export const MARGIN = 1.5;
const CHARS_PER_TOKEN = 4;

/**
 * A text's characters as the size check counts them: a run of whitespace as one, and no more
 * than four of one character in a row. Tokenizers fold both (an indented or padded text, a
 * `=====` rule), and counted as written, a pretty-printed JSON prompt that fits a limit read as
 * twice its size. The other way round is safe: a prompt counted short stays a rate limit.
 */
export function countedChars(s: string): number {
  let n = 0;
  let run = 0;
  let prev = -1;
  let space = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      if (!space) n++;
      space = true;
      prev = -1;
      continue;
    }
    space = false;
    run = c === prev ? run + 1 : 1;
    prev = c;
    if (run <= 4) n++;
  }
  return n;
}

/** How long a limit learnt from a refusal is applied before the model is asked again. */
export const LEARNT_MS = 10 * 60 * 1000;
/** Models with a learnt limit an adapter keeps at most. */
export const MAX_MODELS = 256;

/** `err` as this deployment's refusal of a prompt of `promptChars()` characters, when it is that; else `err` unchanged. */
export function refusedForSize(err: unknown, model: string, promptChars: () => number): unknown {
  if (!(err instanceof UpstreamError) || err.category !== 'rate_limited' || err.inputTokenLimit === undefined) return err;
  return tooLarge(model, err.inputTokenLimit, promptChars(), err) ?? err;
}

/** The refusal of a prompt of `chars` characters against `limit`, when plainly over it. `sent`: the upstream's answer it replaces (none: refused before sending). */
function tooLarge(model: string, limit: number, chars: number, sent?: UpstreamError): UpstreamError | undefined {
  const tokens = Math.ceil(chars / CHARS_PER_TOKEN);
  if (tokens <= limit * MARGIN) return undefined;
  return new UpstreamError({
    category: 'invalid_request',
    status: sent?.status,
    message:
      `Request too large for ${model} on input tokens per minute: the prompt alone is about ${tokens.toLocaleString('en-US')} tokens, ` +
      `and this deployment's whole limit is ${limit.toLocaleString('en-US')}. Reduce the prompt, or use a deployment with a larger limit`,
    providerCode: sent?.providerCode,
    headers: sent?.headers,
    param: 'messages',
    inputTokenLimit: limit,
    unsent: sent === undefined,
  });
}

/** Input-token limits learnt from refusals for size, by model. */
export class SizeLimits {
  private readonly byModel = new Map<string, { limit: number; at: number }>();

  constructor(private readonly clock: Clock) {}

  /**
   * Sends `send()` unless a learnt limit refuses the prompt first (unsent); its failures go through
   * refusedForSize, and a refusal for size is learnt. `promptChars` is measured only when a limit is
   * known or named.
   */
  async send<T>(model: string, promptChars: () => number, send: () => Promise<T>): Promise<T> {
    if (this.byModel.size > 0) {
      const known = this.limitFor(model);
      const refusal = known === undefined ? undefined : tooLarge(model, known, promptChars());
      if (refusal) throw refusal;
    }
    try {
      return await send();
    } catch (e) {
      const err = refusedForSize(e, model, promptChars);
      if (err !== e) this.learn(model, (err as UpstreamError).inputTokenLimit!);
      throw err;
    }
  }

  private limitFor(model: string): number | undefined {
    const l = this.byModel.get(model);
    if (l === undefined) return undefined;
    if (this.clock.now() - l.at < LEARNT_MS) return l.limit;
    this.byModel.delete(model);
    return undefined;
  }

  private learn(model: string, limit: number): void {
    // Most recently learnt last: the Map's order is what a full table gives up first.
    this.byModel.delete(model);
    if (this.byModel.size >= MAX_MODELS) this.byModel.delete(this.byModel.keys().next().value!);
    this.byModel.set(model, { limit, at: this.clock.now() });
  }
}
