/**
 * What a text weighs in tokens before any tokenizer has seen it. English runs
 * about 4 characters a token, but most other scripts about a token a character
 * and an emoji two or more: so on top of its length / 4 a text weighs
 * EXTRA_BYTE_TOKENS for each UTF-8 byte beyond one per UTF-16 unit (one native
 * call; none for ASCII, so English weighs its length / 4 exactly). How that
 * compares with real tokenizers: limits/estimate-tokens.ts. Routing's cheap
 * bound (routing/requirements.ts: pacing a request too small to count exactly)
 * and the estimate's own bound both use it, and so does the count of an answer
 * whose upstream reported no usage. Not the context-window filter: a
 * bound above the truth there skips deployments the request fits.
 */

/** Tokens per UTF-8 byte beyond one per UTF-16 unit: a two-byte letter ~1 token with its ¼, a CJK character ~1.75, an emoji ~2. */
export const EXTRA_BYTE_TOKENS = 0.75;

/** Completion budget assumed when the request sets no max_tokens / max_completion_tokens. */
export const DEFAULT_COMPLETION_TOKENS = 1024;

/** What a string's non-ASCII text adds to its length / 4; 0 for ASCII, so sums of it stay exact. */
export function extraTokens(text: string): number {
  return (Buffer.byteLength(text, 'utf8') - text.length) * EXTRA_BYTE_TOKENS;
}

/**
 * A text's weight in tokens: its length / 4 and what its non-ASCII text adds. Unrounded
 * (quarters and multiples of ¾, exact in a double), so pieces can be summed and the sum
 * rounded up once.
 */
export function textTokens(text: string): number {
  return text.length / 4 + extraTokens(text);
}
