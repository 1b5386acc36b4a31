import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/parse.js';
import { refusedByThisModel } from '../../resilience/classify.js';
import { decide } from '../../resilience/policy.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { unanswered } from './no-answer.js';
import type { GeminiCandidate, GenerateContentResponse } from './wire.js';

const fixture = (name: string): GenerateContentResponse =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as GenerateContentResponse;
/** A candidate as Gemini ends one it could not finish: a finishReason and no content at all. */
const empty = (finishReason: string | undefined, index = 0): GeminiCandidate => ({ ...(finishReason ? { finishReason } : {}), index });
const text = (t: string, finishReason: string, index = 0): GeminiCandidate => ({ content: { role: 'model', parts: [{ text: t }] }, finishReason, index });

describe('unanswered: a buffered answer whose every candidate ended without one', () => {
  it.each(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'TOO_MANY_TOOL_CALLS', 'OTHER', 'LANGUAGE', 'FINISH_REASON_UNSPECIFIED'])(
    '%s with no content is a server failure naming the reason',
    (reason) => {
      const err = unanswered({ candidates: [empty(reason)], usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } });
      expect(err).toBeInstanceOf(UpstreamError);
      expect(err).toMatchObject({ category: 'server', providerCode: reason });
      expect(err!.message).toContain(reason);
    },
  );

  it('MISSING_THOUGHT_SIGNATURE is the request\'s fault: a refusal by this model (invalid_request, failed over), not a server failure', () => {
    for (const candidates of [[empty('MISSING_THOUGHT_SIGNATURE')], [empty('OTHER', 0), empty('MISSING_THOUGHT_SIGNATURE', 1)]]) {
      const err = unanswered({ candidates, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } })!;
      expect(err).toMatchObject({ category: 'invalid_request', providerCode: 'MISSING_THOUGHT_SIGNATURE', reachedUpstream: true });
      expect(err.message).toContain('MISSING_THOUGHT_SIGNATURE');
      // So the executor moves on to the next candidate, without a retry or a breaker failure.
      expect(refusedByThisModel(err)).toBe(true);
      expect(decide(err, 0, parseConfig({ providers: [{ id: 'g', type: 'gemini' }] }, {}).resilience, () => 0.5)).toEqual({ next: 'failover', delayMs: 0, cooldownMs: 0, breaker: 'success' });
    }
  });

  it('an empty candidate without a finishReason (proto3 JSON leaves UNSPECIFIED out), or only thoughts, is none either', () => {
    expect(unanswered({ candidates: [empty(undefined)] })).toMatchObject({ category: 'server', providerCode: 'FINISH_REASON_UNSPECIFIED' });
    const thoughts: GeminiCandidate = { content: { role: 'model', parts: [{ text: 'planning a call…', thought: true }] }, finishReason: 'MALFORMED_FUNCTION_CALL' };
    expect(unanswered({ candidates: [thoughts] })).toMatchObject({ category: 'server' });
  });

  it('with n > 1, only when every candidate is empty and ended so', () => {
    expect(unanswered({ candidates: [empty('MALFORMED_FUNCTION_CALL', 0), empty('OTHER', 1)] })).toMatchObject({ providerCode: 'MALFORMED_FUNCTION_CALL' });
    expect(unanswered({ candidates: [empty('MALFORMED_FUNCTION_CALL', 0), text('B', 'STOP', 1)] })).toBeUndefined();
    // An empty STOP is an answer (an empty one): the candidates did not all fail.
    expect(unanswered({ candidates: [empty('MALFORMED_FUNCTION_CALL', 0), empty('STOP', 1)] })).toBeUndefined();
  });

  it('content, a function call, an empty end that is an answer, or a blocked prompt: not a failure', () => {
    expect(unanswered({ candidates: [text('Let me check.', 'MALFORMED_FUNCTION_CALL')] })).toBeUndefined();
    expect(unanswered({ candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'TOO_MANY_TOOL_CALLS' }] })).toBeUndefined();
    for (const reason of ['STOP', 'MAX_TOKENS', 'SAFETY', 'PROHIBITED_CONTENT']) expect(unanswered({ candidates: [empty(reason)] }), reason).toBeUndefined();
    expect(unanswered(fixture('response-candidate-safety.json'))).toBeUndefined();
    expect(unanswered(fixture('response-prompt-blocked.json'))).toBeUndefined();
    expect(unanswered(fixture('response-text.json'))).toBeUndefined();
  });
});
