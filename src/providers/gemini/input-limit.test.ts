import { describe, expect, it } from 'vitest';
import { geminiErrorFromResponse } from './errors.js';
import { geminiInputLimitOf, promptChars } from './input-limit.js';

const violation = (quotaId: string, quotaValue?: string, quotaMetric = 'generativelanguage.googleapis.com/generate_content_free_tier_input_token_count') => ({
  quotaMetric,
  quotaId,
  ...(quotaValue === undefined ? {} : { quotaValue }),
});
const quotaFailure = (...violations: object[]) => ({ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations });

describe('geminiInputLimitOf', () => {
  it("reads the input-token quota's value from the QuotaFailure detail, or from the message when the detail has none", () => {
    expect(geminiInputLimitOf({ details: [quotaFailure(violation('GenerateContentInputTokensPerModelPerMinute-FreeTier', '250000'))] }, 'You exceeded your current quota')).toBe(250_000);
    expect(
      geminiInputLimitOf(
        { details: [quotaFailure(violation('GenerateContentInputTokensPerModelPerMinute-FreeTier'))] },
        '* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 32000, model: gemini-2.0-pro-exp',
      ),
    ).toBe(32_000);
  });

  it('the smallest of several; request quotas, zero limits (a model the tier does not serve) and odd values are no size', () => {
    expect(
      geminiInputLimitOf(
        {
          details: [
            quotaFailure(
              violation('GenerateContentInputTokensPerModelPerDay-FreeTier', '6000000'),
              violation('GenerateContentInputTokensPerModelPerMinute-FreeTier', '250000'),
              violation('GenerateRequestsPerMinutePerProjectPerModel-FreeTier', '10', 'generativelanguage.googleapis.com/generate_content_free_tier_requests'),
            ),
          ],
        },
        '',
      ),
    ).toBe(250_000);
    expect(geminiInputLimitOf({ details: [quotaFailure(violation('GenerateRequestsPerMinutePerProjectPerModel-FreeTier', '10', 'generativelanguage.googleapis.com/generate_content_free_tier_requests'))] }, '')).toBeUndefined();
    expect(geminiInputLimitOf({}, '* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 0, model: gemini-3-pro')).toBeUndefined();
    const odd = [quotaFailure(violation('GenerateContentInputTokensPerModelPerMinute-FreeTier', '-5')), { '@type': 7 }, null] as unknown as [];
    expect(geminiInputLimitOf({ details: odd }, '')).toBeUndefined();
    expect(geminiInputLimitOf({ details: 'nope' as unknown as [] }, 'Resource has been exhausted (e.g. check quota).')).toBeUndefined();
  });

  it("RESOURCE_EXHAUSTED carries it on the error; other statuses do not", () => {
    const body = (code: number, status: string) =>
      JSON.stringify({ error: { code, status, message: 'limit', details: [quotaFailure(violation('GenerateContentInputTokensPerModelPerMinute-FreeTier', '250000'))] } });
    expect(geminiErrorFromResponse(429, body(429, 'RESOURCE_EXHAUSTED'), {}, 0)).toMatchObject({ category: 'rate_limited', inputTokenLimit: 250_000 });
    expect(geminiErrorFromResponse(400, body(400, 'INVALID_ARGUMENT'), {}, 0).inputTokenLimit).toBeUndefined();
  });
});

describe('promptChars', () => {
  it("counts the system instruction, the turns' text and function results as sent; not media or calls", () => {
    expect(
      promptChars({
        systemInstruction: { parts: [{ text: 'sys' }] },
        contents: [
          { role: 'user', parts: [{ text: 'hello' }, { inlineData: { mimeType: 'image/png', data: 'A'.repeat(1000) } }] },
          { role: 'model', parts: [{ functionCall: { name: 'f', args: { q: 'x'.repeat(1000) } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'f', response: { r: 1 } } }] },
        ],
      }),
    ).toBe('sys'.length + 'hello'.length + '{"r":1}'.length);
  });

  it("a function result that was text counts as the text, not its JSON escapes", () => {
    const text = 'line one\n\u001b[31mred\u001b[0m "quoted"';
    expect(promptChars({ contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: { content: text } } }] }] })).toBe(text.length);
  });
});
