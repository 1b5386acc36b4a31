/**
 * `reasoning_effort` → Anthropic's extended thinking. Pure.
 *
 * - Claude 4.6 and later (opus-4-6, sonnet-4-6, opus-4-7…, Mythos and Fable) take
 *   `thinking: {type: "adaptive"}` with `output_config: {effort}`, and `display: "summarized"`
 *   after 4.6 (Opus 4.7 and later, Mythos and Fable omit the thinking text unless `display` asks
 *   for it); Opus 4.7 refuses a fixed budget. `minimal` has no Anthropic level and goes as `low`; `xhigh` goes as `max` on Opus
 *   (the only family that has it) and as `high` elsewhere.
 * - Earlier models take `thinking: {type: "enabled", budget_tokens}`, the budget from
 *   THINKING_BUDGET (always ≥ 1024, Anthropic's minimum).
 * - `none` sends nothing: thinking is off unless asked for. Models before Claude 3.7 Sonnet,
 *   which have no thinking, get none either.
 *
 * Thinking counts against `max_tokens`, and a budget must be below it: the client's limit is
 * kept when it leaves the answer at least MIN_ANSWER_TOKENS beside the budget, else the budget
 * is added on top of it (of DEFAULT_MAX_TOKENS when the client set none), so a small limit
 * still leaves the answer the room the client asked for — up to MAX_BUDGET_OUTPUT, past which
 * the budget shrinks instead.
 *
 * With thinking on Anthropic refuses temperature other than 1 and top_p below 0.95: both are
 * dropped, as OpenAI's reasoning models ignore sampling too. Thinking is not asked for where
 * Anthropic would refuse the request because of it — the answer matters more than its
 * reasoning: a tool_choice that forces a call, a final assistant message to continue (a
 * prefill, which stream resume sends), and history whose last assistant turn called tools
 * (Anthropic wants that turn's signed thinking blocks back, which an OpenAI client never had).
 */
import type { ReasoningEffort, ThinkingEffort } from '../reasoning-effort.js';
import { MIN_ANSWER_TOKENS, THINKING_BUDGET } from '../reasoning-effort.js';
import type { AnthropicMessageParam, AnthropicRequest } from './wire.js';

/** Models before extended thinking (Claude 3.7 Sonnet was the first): they refuse `thinking`. */
const NO_THINKING = /claude-(?:3-(?!7)|2|instant)/;

/** The adaptive models whose thinking text comes without asking (`display` defaults to summarized): Claude 4.6. */
const SUMMARIZED_BY_DEFAULT = /claude-(?:opus|sonnet|haiku)-4-6(?!\d)/;


/**
 * The smallest output limit of a model that takes a thinking budget (Claude Opus 4 and 4.1:
 * 32,000; 3.7 Sonnet, Sonnet 4 and Haiku 4.5 take 64,000): a budget added on top of a large
 * client limit may not take max_tokens past it, or Anthropic refuses the request (400).
 */
export const MAX_BUDGET_OUTPUT = 32_000;

type AdaptiveEffort = 'low' | 'medium' | 'high' | 'max';

/**
 * Sets thinking on `body` (already converted, sampling included) for `effort`. `clientMax`: the
 * client's own max_tokens (undefined when the body carries the default).
 */
export function applyThinking(body: AnthropicRequest, effort: ReasoningEffort, model: string, clientMax: number | undefined, defaultMax: number): void {
  if (effort === 'none' || NO_THINKING.test(model) || !thinkingAllowed(body)) return;
  let budget = THINKING_BUDGET[effort];
  const kept = clientMax !== undefined && clientMax - budget >= MIN_ANSWER_TOKENS;
  body.max_tokens = kept ? clientMax : (clientMax ?? defaultMax) + budget;
  const adaptive = isAdaptive(model);
  if (!kept && !adaptive && body.max_tokens > MAX_BUDGET_OUTPUT) {
    // The answer keeps its room; the thinking takes what is left under the limit (never under
    // 1024: an answer room that large was kept above, budget and all).
    budget = Math.max(THINKING_BUDGET.minimal, MAX_BUDGET_OUTPUT - (clientMax ?? defaultMax));
    body.max_tokens = (clientMax ?? defaultMax) + budget;
  }
  if (adaptive) {
    // Opus 4.7 and later, Mythos and Fable omit the thinking text unless asked (`display`): no
    // reasoning_content came back, and a stream thought in silence until the first-token limit failed it.
    // The 4.6 models summarize by default: asked for nothing they might not know.
    body.thinking = SUMMARIZED_BY_DEFAULT.test(model) ? { type: 'adaptive' } : { type: 'adaptive', display: 'summarized' };
    body.output_config = { effort: adaptiveEffort(effort, model) };
  } else {
    body.thinking = { type: 'enabled', budget_tokens: budget };
  }
  delete body.temperature;
  delete body.top_p;
}

function thinkingAllowed(body: AnthropicRequest): boolean {
  const choice = body.tool_choice?.type;
  if (choice === 'any' || choice === 'tool') return false;
  const last = body.messages[body.messages.length - 1];
  if (last?.role === 'assistant') return false;
  const lastAssistant = findLastAssistant(body.messages);
  return !(lastAssistant && Array.isArray(lastAssistant.content) && lastAssistant.content.some((b) => b.type === 'tool_use'));
}

function findLastAssistant(messages: AnthropicMessageParam[]): AnthropicMessageParam | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'assistant') return messages[i];
  return undefined;
}

/** `claude-opus-4-6`, `anthropic.claude-sonnet-4-6-v1`, `claude-opus-5`…: a dated suffix (`-4-20250514`) is no minor version. */
const VERSIONED = /claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)/;

/** Families named without an Opus/Sonnet/Haiku version that think only adaptively (a budget is a 400). */
const ADAPTIVE_FAMILIES = /claude-(?:mythos|fable)/;

/** Claude 4.6 and later, Mythos and Fable: adaptive thinking (Opus 4.7, Mythos and Fable take no other). */
export function isAdaptive(model: string): boolean {
  if (ADAPTIVE_FAMILIES.test(model)) return true;
  const m = VERSIONED.exec(model);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = m[2] === undefined ? 0 : Number(m[2]);
  return major > 4 || (major === 4 && minor >= 6);
}

function adaptiveEffort(effort: ThinkingEffort, model: string): AdaptiveEffort {
  switch (effort) {
    case 'minimal':
    case 'low':
      return 'low';
    case 'medium':
      return 'medium';
    case 'high':
      return 'high';
    case 'xhigh':
      return model.includes('opus') ? 'max' : 'high';
  }
}
