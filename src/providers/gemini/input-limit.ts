/**
 * Gemini's side of refused-for-size.ts: the input-token quota its RESOURCE_EXHAUSTED names, and
 * what of a request counts against it. The quota is named in the error's QuotaFailure detail
 * (`quotaId` "GenerateContentInputTokensPerModelPerMinute-FreeTier", `quotaValue` "250000") and in
 * newer messages ("Quota exceeded for metric: generativelanguage.googleapis.com/
 * generate_content_free_tier_input_token_count, limit: 250000, model: …"). A limit of 0 (a model
 * the tier does not serve at all) is no size: that stays a rate limit, and cools the deployment down.
 */
import type { GeminiErrorBody, GeminiPart, GenerateContentRequest } from './wire.js';
import { countedChars } from '../refused-for-size.js';

const INPUT_QUOTA_RE = /input_?tokens?/i;
const MESSAGE_LIMIT_RE = /input_token_count, limit: (\d{1,15})\b/gi;

/** The smallest input-token quota the error names (the one a prompt can exceed first), or undefined. */
export function geminiInputLimitOf(e: GeminiErrorBody['error'], message: string): number | undefined {
  let least = Number.POSITIVE_INFINITY;
  const consider = (v: unknown) => {
    const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : typeof v === 'number' ? v : Number.NaN;
    if (Number.isSafeInteger(n) && n > 0 && n < least) least = n;
  };
  for (const d of Array.isArray(e.details) ? e.details : []) {
    if (!d || typeof d !== 'object' || typeof d['@type'] !== 'string' || !d['@type'].endsWith('google.rpc.QuotaFailure')) continue;
    for (const v of Array.isArray(d.violations) ? d.violations : []) {
      if (!v || typeof v !== 'object') continue;
      const { quotaMetric, quotaId, quotaValue } = v as Record<string, unknown>;
      if ((typeof quotaMetric === 'string' && INPUT_QUOTA_RE.test(quotaMetric)) || (typeof quotaId === 'string' && INPUT_QUOTA_RE.test(quotaId))) consider(quotaValue);
    }
  }
  for (const m of message.matchAll(MESSAGE_LIMIT_RE)) consider(m[1]);
  return least === Number.POSITIVE_INFINITY ? undefined : least;
}

/** The prompt's text, counted in characters (countedChars): the system instruction and the turns' text and function results (media and declarations left out: a lower bound). */
export function promptChars(req: GenerateContentRequest): number {
  let n = 0;
  for (const p of req.systemInstruction?.parts ?? []) n += countedChars(p.text);
  for (const c of req.contents) for (const p of c.parts) n += partChars(p);
  return n;
}

function partChars(p: GeminiPart): number {
  if (typeof p.text === 'string') return countedChars(p.text);
  const response = p.functionResponse?.response;
  if (response === undefined) return 0;
  // A result that was text goes as `{content: text}`: counted as the text, not its JSON escapes.
  const content = (response as { content?: unknown }).content;
  return countedChars(typeof content === 'string' && Object.keys(response).length === 1 ? content : JSON.stringify(response));
}
