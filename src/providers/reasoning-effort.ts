/**
 * OpenAI's `reasoning_effort`, read once for the native adapters (Anthropic, Gemini, Cohere,
 * Ollama), which each express it their own way: a thinking token budget, a thinking level, a
 * switch. OpenAI-compatible upstreams get the field as the client sent it.
 *
 * Validation lets any string through (protocol/validate-options.ts: the list grows with new
 * models). A value this table does not know is treated as absent, not refused: the native
 * provider would have no setting to map it to, and the request still has an answer to give.
 */
import type { ChatRequest } from '../protocol/openai.js';

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
/** An effort that asks for some thinking. */
export type ThinkingEffort = Exclude<ReasoningEffort, 'none'>;

const EFFORTS: ReadonlySet<string> = new Set<ReasoningEffort>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/**
 * Thinking tokens an effort stands for, where a provider takes a budget (Anthropic before
 * Claude 4.6, Gemini 2.5, Cohere). Each is at least Anthropic's minimum (1024) and at most
 * Gemini 2.5 Flash's maximum (24576), so one table serves every provider; with the default
 * answer room (4096) the largest stays under the 32k output limit of Claude Opus 4.
 */
export const THINKING_BUDGET: Readonly<Record<ThinkingEffort, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
};

/**
 * The request's effort, or undefined when it has none (or one this table does not know). One
 * property read when absent. A request that ends with an assistant message continues that text
 * (a prefill, as stream resume sends): it gets `none`, the least thinking the provider allows.
 * Thinking again there cost time and tokens for reasoning the continuation never returns (a
 * resumed stream's client has its reasoning already), and Anthropic refuses thinking beside a
 * prefill anyway.
 */
export function reasoningEffortOf(req: ChatRequest): ReasoningEffort | undefined {
  const effort = req.reasoning_effort;
  if (effort == null || !EFFORTS.has(effort)) return undefined;
  const last = req.messages[req.messages.length - 1];
  return last?.role === 'assistant' && !last.tool_calls?.length ? 'none' : (effort as ReasoningEffort);
}

/** The answer's room a client's max_tokens must leave beside the thinking budget to be kept as it is. */
export const MIN_ANSWER_TOKENS = 1024;

/**
 * A client's output limit for an answer that thinks first, where the provider counts the thinking
 * in it (Anthropic's max_tokens, Gemini's maxOutputTokens): kept when it leaves the answer
 * MIN_ANSWER_TOKENS beside `budget`, else `budget` on top of it, so a small limit is the answer's
 * own and the thinking does not eat it (an empty answer, cut for length).
 */
export function roomForThinking(clientMax: number, budget: number): number {
  return clientMax - budget >= MIN_ANSWER_TOKENS ? clientMax : clientMax + budget;
}
