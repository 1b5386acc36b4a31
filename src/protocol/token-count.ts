/**
 * Token counts as upstreams report them, checked before the gateway relies on
 * them for the trace, the cost and the limits' reconciliation: a count is a
 * non-negative safe integer. Servers send a usage without one of its counts,
 * or with `"a"`, `-5` or `1e300` in it; summed as they came, the trace read
 * `"0a"` (a string), `null` (NaN) or a negative cost.
 */
import type { Usage } from './openai.js';
import { textTokens } from './text-weight.js';

/** `v` when it is a token count, else undefined. */
export function tokenCount(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;
}

/**
 * The usage reported, when its counts are counts; otherwise each count that is not one
 * is taken from `counted()` (the gateway's own count), called only then.
 */
export function checkedUsage(reported: unknown, counted: () => Usage): Usage {
  const u = reported !== null && typeof reported === 'object' ? (reported as Partial<Record<keyof Usage, unknown>>) : undefined;
  const prompt = tokenCount(u?.prompt_tokens);
  const completion = tokenCount(u?.completion_tokens);
  if (prompt !== undefined && completion !== undefined) {
    return tokenCount(u!.total_tokens) !== undefined ? (u as Usage) : { ...(u as Usage), total_tokens: prompt + completion };
  }
  const n = counted();
  const p = prompt ?? n.prompt_tokens;
  const c = completion ?? n.completion_tokens;
  const out: Usage = { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
  // The prompt's details (its cache hits, priced apart) stay with the prompt count they describe, as a stream's do.
  const details = (u as Usage | undefined)?.prompt_tokens_details;
  if (prompt !== undefined && details !== undefined) out.prompt_tokens_details = details;
  const written = (u as Usage | undefined)?.cache_creation_input_tokens;
  if (prompt !== undefined && written !== undefined) out.cache_creation_input_tokens = written;
  return out;
}

/**
 * A tool or legacy function call's name and arguments, in characters, where they are strings:
 * generated text, as content is (a broken stream's message says how much was sent).
 */
export function callChars(f: unknown): number {
  if (f === null || typeof f !== 'object') return 0;
  const { name, arguments: args } = f as { name?: unknown; arguments?: unknown };
  return (typeof name === 'string' ? name.length : 0) + (typeof args === 'string' ? args.length : 0);
}

/** The same name and arguments weighed in tokens (textTokens, unrounded), counted as content is when an upstream reports no usage. */
export function callTokens(f: unknown): number {
  if (f === null || typeof f !== 'object') return 0;
  const { name, arguments: args } = f as { name?: unknown; arguments?: unknown };
  return (typeof name === 'string' ? textTokens(name) : 0) + (typeof args === 'string' ? textTokens(args) : 0);
}
