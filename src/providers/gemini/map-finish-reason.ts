import type { FinishReason } from '../../protocol/openai.js';

/** Gemini reasons that mean the provider withheld or cut the content for policy. */
const FILTERED = new Set([
  'SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII',
  'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION',
]);
/** Reasons that mean the output limit was reached (CONTINUATION: the per-request one, with more to come). */
const LIMITED = new Set(['MAX_TOKENS', 'CONTINUATION']);

/**
 * Gemini `finishReason` → OpenAI `finish_reason`. Gemini says STOP even when the
 * turn ends in function calls, so the caller tells us whether it saw any. The
 * reasons that mean the turn went wrong (MALFORMED_FUNCTION_CALL, OTHER, …) end
 * an answer that has content as `stop`: the client keeps what it got.
 *
 * `empty`: the candidate has neither text nor a function call. Ended so for a reason that
 * is no answer (endsWithoutAnswer), it is a choice the provider produced nothing for — met
 * only beside a sibling that answered (with n > 1), as a response of nothing but such
 * candidates fails the attempt (no-answer.ts). Its end is `content_filter`: of OpenAI's five
 * reasons the one that says "this choice's content was withheld", which clients already
 * treat as no usable answer (skip it, retry, say so). `stop` passed the empty text off as
 * the model's whole answer (a client picking among the n took it); `length` would invite a
 * continuation, `tool_calls` an agent loop looking for calls that are not there. A reason
 * of Gemini's own (`malformed_function_call`) would break typed clients whose decoders
 * know only those five.
 */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean, empty = false): FinishReason {
  if (reason !== undefined && LIMITED.has(reason)) return 'length';
  if (reason !== undefined && FILTERED.has(reason)) return 'content_filter';
  if (empty && endsWithoutAnswer(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/**
 * Whether a candidate that ended so, with neither text nor a function call, gave no answer.
 * Only STOP, a limit and a policy reason are an answer even when empty (the client asked for
 * that end, or set that limit, or the provider refused, which contentPolicyFallbacks handles).
 * The rest — a function call Gemini could not parse or did not expect, too many calls,
 * OTHER, LANGUAGE, FINISH_REASON_UNSPECIFIED (which proto3 JSON leaves out, so `undefined`
 * too), and any reason newer than this list — leave the client with nothing: the attempt
 * failed, and another candidate may answer.
 */
export function endsWithoutAnswer(reason: string | undefined): boolean {
  return reason === undefined || !(reason === 'STOP' || LIMITED.has(reason) || FILTERED.has(reason));
}
