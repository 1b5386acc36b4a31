/**
 * The loopback Anthropic server's extended thinking: what the real API refuses beside
 * `thinking` (and in `output_config.effort`), in its words.
 */
type Json = Record<string, unknown>;
type Block = Json & { type: string };

/** Models that take only adaptive thinking (`thinking.type: "enabled"` is a 400). */
const ADAPTIVE_ONLY = /claude-(?:opus-4-[7-9](?!\d)|mythos|fable)/;

const THINKING_DOCS = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking';

/** Models whose thinking is `display: "omitted"` unless asked otherwise (Opus 4.7 and later, Mythos, Fable). */
const OMITTED_BY_DEFAULT = ADAPTIVE_ONLY;

/**
 * The thinking text a response carries: none (an empty `thinking`, the signature kept) where
 * the display is omitted, as it is by default on the newest models.
 */
export function shownThinking(body: Json, thinking: string): string {
  const display = (body.thinking as Json | undefined)?.display ?? (OMITTED_BY_DEFAULT.test(String(body.model)) ? 'omitted' : 'summarized');
  return display === 'omitted' ? '' : thinking;
}

/**
 * What the API refuses with extended thinking on: a budget under 1024 or not under max_tokens, an
 * effort it does not have, temperature other than 1, top_p under 0.95, a forced tool call, and a
 * last assistant turn (a prefill, or the one whose tool calls are being answered) that does not
 * start with its thinking block.
 */
export function thinkingProblem(body: Json): string | undefined {
  const effort = (body.output_config as Json | undefined)?.effort;
  if (effort !== undefined && !['low', 'medium', 'high', 'max'].includes(String(effort))) {
    return "output_config.effort: Input should be 'low', 'medium', 'high' or 'max'";
  }
  const thinking = body.thinking as Json | undefined;
  if (thinking === undefined || thinking.type === 'disabled') return undefined;
  if (thinking.type === 'enabled') {
    // Opus 4.7 and later, Mythos and Fable think only adaptively: a fixed budget is refused.
    if (ADAPTIVE_ONLY.test(String(body.model))) {
      return 'thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort to control thinking behavior.';
    }
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || !Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Field required';
    if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (typeof body.max_tokens === 'number' && body.max_tokens <= budget) return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. ${THINKING_DOCS}`;
  } else if (thinking.type !== 'adaptive') {
    return "thinking: Input tag does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'";
  }
  if (thinking.display !== undefined && thinking.display !== 'summarized' && thinking.display !== 'omitted') {
    return "thinking.display: Input should be 'summarized' or 'omitted'";
  }
  if (body.temperature !== undefined && body.temperature !== 1) return `\`temperature\` may only be set to 1 when thinking is enabled. ${THINKING_DOCS}`;
  if (typeof body.top_p === 'number' && body.top_p < 0.95) return `\`top_p\` must be greater than or equal to 0.95 or unset when thinking is enabled. ${THINKING_DOCS}`;
  const choice = (body.tool_choice as Json | undefined)?.type;
  if (choice === 'any' || choice === 'tool') return `Thinking may not be enabled when tool_choice forces tool use. ${THINKING_DOCS}`;
  const messages = body.messages as Json[];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'assistant') continue;
    const blocks = Array.isArray(m.content) ? (m.content as Block[]) : [{ type: 'text' }];
    const final = i === messages.length - 1;
    if ((final || blocks.some((b) => b.type === 'tool_use')) && blocks[0]?.type !== 'thinking' && blocks[0]?.type !== 'redacted_thinking') {
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${blocks[0]?.type ?? 'text'}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block. ${THINKING_DOCS}`;
    }
    break;
  }
  return undefined;
}
