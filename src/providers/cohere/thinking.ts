/**
 * `reasoning_effort` → Cohere v2's `thinking`. Pure.
 *
 * Only Cohere's reasoning models (`command-a-reasoning-…`) take it; they think unless told not
 * to, so `none` is `{type: "disabled"}` and any other effort `{type: "enabled", token_budget}`
 * from THINKING_BUDGET. Other models get nothing: they have no thinking to switch.
 */
import { THINKING_BUDGET, type ReasoningEffort } from '../reasoning-effort.js';
import type { CohereThinking } from './wire.js';

export const isReasoningModel = (model: string): boolean => model.includes('reasoning');

export function cohereThinkingOf(effort: ReasoningEffort, model: string): CohereThinking | undefined {
  if (!isReasoningModel(model)) return undefined;
  return effort === 'none' ? { type: 'disabled' } : { type: 'enabled', token_budget: THINKING_BUDGET[effort] };
}
