/**
 * `reasoning_effort` → Cohere v2's `thinking`. Pure.
 *
 * Only Cohere's reasoning models (`command-a-reasoning-…`) take it; they think unless told not
 * to, so `none` is `{type: "disabled"}` and any other effort `{type: "enabled", token_budget}`
 * from THINKING_BUDGET. Other models get nothing: they have no thinking to switch.
 *
 * The thinking counts in `max_tokens` (Cohere asks a budget to leave the answer 1K of the
 * model's 32K output): a client's small limit is the answer's own, so the budget goes on top
 * of it (roomForThinking), as for Gemini and Anthropic; sent as it came, `max_tokens: 300`
 * beside an 8K budget ended in an empty answer cut for length.
 */
import { roomForThinking, THINKING_BUDGET, type ReasoningEffort } from '../reasoning-effort.js';
import type { CohereThinking } from './wire.js';

export const isReasoningModel = (model: string): boolean => model.includes('reasoning');

export function cohereThinkingOf(effort: ReasoningEffort, model: string): CohereThinking | undefined {
  if (!isReasoningModel(model)) return undefined;
  return effort === 'none' ? { type: 'disabled' } : { type: 'enabled', token_budget: THINKING_BUDGET[effort] };
}

/** Command A Reasoning's output limit, thinking included: a widened `max_tokens` may not pass it (Cohere refuses the request). */
export const MAX_REASONING_OUTPUT = 32_000;

/**
 * `max_tokens` for a request that thinks with `thinking`'s budget: the client's limit when it
 * leaves the answer its room, else the budget on top of it — within MAX_REASONING_OUTPUT, the
 * budget shrinking (never below 1024) so that the answer keeps what the client asked for.
 * Returns `thinking` with the budget it ends with.
 */
export function withAnswerRoom(thinking: CohereThinking, clientMax: number): { thinking: CohereThinking; maxTokens: number } {
  const budget = thinking.token_budget;
  if (thinking.type !== 'enabled' || budget === undefined) return { thinking, maxTokens: clientMax };
  const room = roomForThinking(clientMax, budget);
  if (room === clientMax || room <= MAX_REASONING_OUTPUT) return { thinking, maxTokens: room };
  const shrunk = Math.max(THINKING_BUDGET.minimal, MAX_REASONING_OUTPUT - clientMax);
  return { thinking: { type: 'enabled', token_budget: shrunk }, maxTokens: clientMax + shrunk };
}
