/**
 * A Gemini answer whose every candidate ended empty for a reason that is no answer
 * (map-finish-reason.ts: a MALFORMED_FUNCTION_CALL, say) is a failed attempt, not an
 * empty `stop`: converted as it came, the client got nothing and the request never
 * failed over. `server`, as any other 2xx without an answer: retried, then the next candidate.
 *
 * Except MISSING_THOUGHT_SIGNATURE: the request's history lacks the thought signatures this
 * model requires on earlier function calls (a client that dropped them, or a history from
 * another model). Asked again as sent, this deployment refuses it again, and the fault is
 * the request's: not a breaker failure. Another model may well take the history as it is,
 * so it is a refusal by this model (`invalid_request`, refusedByThisModel): the next
 * candidate is tried, and if none serves, the client gets this refusal as a 400.
 */
import { UpstreamError } from '../../resilience/upstream-error.js';
import { partsOf, textOf, toolCallOf } from './convert-response.js';
import { endsWithoutAnswer } from './map-finish-reason.js';
import type { GeminiCandidate, GenerateContentResponse } from './wire.js';

const NO_ID = (): string => '';

/** Whether a candidate carries something the client can use: visible text or a function call. */
export function carriesAnswer(c: GeminiCandidate | undefined): boolean {
  const parts = partsOf(c);
  return textOf(parts) !== '' || parts.some((p) => toolCallOf(p, NO_ID) !== undefined);
}

export const MISSING_THOUGHT_SIGNATURE = 'MISSING_THOUGHT_SIGNATURE';

/** The failure for candidates that all ended without an answer; the first one's reason names it. */
export function noAnswerError(reasons: (string | undefined)[]): UpstreamError {
  // A fault of the request, whichever candidate said it: with n > 1 the others ended for it too.
  if (reasons.includes(MISSING_THOUGHT_SIGNATURE)) {
    const err = new UpstreamError({
      category: 'invalid_request',
      message: `gemini refused the conversation as sent: earlier function calls lack the thought signatures this model requires (${MISSING_THOUGHT_SIGNATURE})`,
      providerCode: MISSING_THOUGHT_SIGNATURE,
    });
    // Answered (a 200, its prompt counted): its capacity is spent, though nothing was generated.
    err.reachedUpstream = true;
    return err;
  }
  const reason = reasons.find((r) => r !== undefined) ?? 'FINISH_REASON_UNSPECIFIED';
  return new UpstreamError({ category: 'server', message: `gemini ended every candidate without an answer (${reason})`, providerCode: reason });
}

/**
 * The failure a buffered answer stands for, if it is one: candidates, every one empty and
 * ended without an answer. One candidate with content (of n) keeps the whole answer. A blocked
 * prompt (no candidates) is an answer, judged before this.
 */
export function unanswered(res: GenerateContentResponse): UpstreamError | undefined {
  const list = Array.isArray(res.candidates) ? res.candidates : [];
  if (list.length === 0) return undefined;
  const reasons: (string | undefined)[] = [];
  for (const item of list) {
    const c = item !== null && typeof item === 'object' ? item : undefined;
    const reason = typeof c?.finishReason === 'string' && c.finishReason ? c.finishReason : undefined;
    if (carriesAnswer(c) || !endsWithoutAnswer(reason)) return undefined;
    reasons.push(reason);
  }
  return noAnswerError(reasons);
}
