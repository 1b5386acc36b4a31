import type { FinishReason } from '../../protocol/openai.js';

/** Gemini reasons that mean the provider withheld or cut the content for policy. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/**
 * Gemini `finishReason` → OpenAI `finish_reason`. Gemini says STOP even when the
 * turn ends in function calls, so the caller tells us whether it saw any.
 */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && FILTERED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}
