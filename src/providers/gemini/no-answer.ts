/**
 * A Gemini answer whose every candidate ended empty for a reason that is no answer
 * (map-finish-reason.ts: a MALFORMED_FUNCTION_CALL, say) is a failed attempt, not an
 * empty `stop`: converted as it came, the client got nothing and the request never
 * failed over. `server`, as any other 2xx without an answer: retried, then the next candidate.
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

/** The failure for candidates that all ended without an answer; the first one's reason names it. */
export function noAnswerError(reasons: (string | undefined)[]): UpstreamError {
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
