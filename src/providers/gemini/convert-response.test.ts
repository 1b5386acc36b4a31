import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toChatCompletion, type ResponseContext } from './convert-response.js';
import { endsWithoutAnswer, mapFinishReason } from './map-finish-reason.js';
import type { GenerateContentResponse } from './wire.js';

const fixture = (name: string): GenerateContentResponse =>
  JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as GenerateContentResponse;
/** Ids numbered per answer here, so the expectations can name them (the adapter's are random: tool-call-id.ts). */
const ctx = (): ResponseContext => {
  let n = 0;
  return { model: 'gemini-asked', requestId: 'req-1', created: 1_700_000_000, newToolId: () => `call_${n++}` };
};

describe('toChatCompletion (fixtures in Gemini wire format)', () => {
  it('text: content, stop, model from modelVersion, thinking tokens billed as completion', () => {
    expect(toChatCompletion(fixture('response-text.json'), ctx())).toEqual({
      id: 'chatcmpl-8yZraK2nA5WdnvgPmKnWkAc',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-2.5-flash',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content:
              'The sky looks blue because air molecules scatter short (blue) wavelengths of sunlight far more than long (red) ones.',
            refusal: null,
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 402,
        total_tokens: 411,
        completion_tokens_details: { reasoning_tokens: 378 },
      },
      system_fingerprint: null,
    });
  });

  it('function calls: tool_calls with deterministic ids, JSON arguments, signature kept, finish tool_calls', () => {
    const out = toChatCompletion(fixture('response-function-call.json'), ctx());
    expect(out.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_0',
              type: 'function',
              function: { name: 'get_current_temperature', arguments: '{"location":"Paris"}' },
              extra_content: { google: { thought_signature: 'CiQB0e2Kb7Tq3xQm1A4pGzM2kqXn8u8n5YdYp0x2k9QJ7Lw=' } },
            },
            { id: 'call_1', type: 'function', function: { name: 'get_current_temperature', arguments: '{"location":"London"}' } },
          ],
          refusal: null,
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    expect(out.usage).toEqual({
      prompt_tokens: 74,
      completion_tokens: 86,
      total_tokens: 160,
      prompt_tokens_details: { cached_tokens: 32 },
      completion_tokens_details: { reasoning_tokens: 50 },
    });
  });

  it('a blocked prompt (no candidates) still yields one choice: empty, content_filter', () => {
    const out = toChatCompletion(fixture('response-prompt-blocked.json'), ctx());
    expect(out.choices).toEqual([{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' }]);
    expect(out.usage).toEqual({ prompt_tokens: 15, completion_tokens: 0, total_tokens: 15 });
    expect(out.model).toBe('gemini-2.0-flash');
  });

  it('a blocked prompt with n = 3 yields three choices, each empty and content_filter', () => {
    const out = toChatCompletion(fixture('response-prompt-blocked.json'), { ...ctx(), choices: 3 });
    expect(out.choices).toEqual([0, 1, 2].map((index) => ({ index, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'content_filter' })));
  });

  it('a candidate blocked for safety has no content at all', () => {
    const out = toChatCompletion(fixture('response-candidate-safety.json'), ctx());
    expect(out.choices[0]).toMatchObject({ message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' });
  });

  it('tolerates missing fields everywhere', () => {
    const bare = toChatCompletion({}, ctx());
    expect(bare).toEqual({
      id: 'chatcmpl-req-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gemini-asked',
      choices: [{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      system_fingerprint: null,
    });
    const odd = {
      candidates: [null, {}, { content: {} }, { content: { parts: [null, 7, { text: 'ok' }, { functionCall: { args: {} } }] } }],
      usageMetadata: { promptTokenCount: 'x' },
    } as unknown as GenerateContentResponse;
    const out = toChatCompletion(odd, ctx());
    expect(out.choices.map((c) => c.message.content)).toEqual(['', '', 'ok']);
    expect(out.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('maps several candidates to choices and leaves thought summaries out of content', () => {
    const out = toChatCompletion(
      {
        candidates: [
          { index: 0, content: { parts: [{ text: 'thinking…', thought: true }, { text: 'A' }] }, finishReason: 'STOP' },
          { index: 1, content: { parts: [{ text: 'B' }] }, finishReason: 'MAX_TOKENS' },
        ],
      },
      ctx(),
    );
    expect(out.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'A', 'stop'],
      [1, 'B', 'length'],
    ]);
    // The summaries are the reasoning_content of their own choice.
    expect(out.choices[0]!.message.reasoning_content).toBe('thinking…');
    expect(out.choices[1]!.message).not.toHaveProperty('reasoning_content');
  });

  it('a candidate with thoughts alone is still an empty one: its reasoning kept, its end no answer', () => {
    const out = toChatCompletion(
      {
        candidates: [
          { index: 0, content: { parts: [{ text: 'hmm', thought: true }] }, finishReason: 'MALFORMED_FUNCTION_CALL' },
          { index: 1, content: { parts: [{ text: 'B' }] }, finishReason: 'STOP' },
        ],
      },
      ctx(),
    );
    expect(out.choices[0]!.message).toMatchObject({ content: '', reasoning_content: 'hmm' });
    expect(out.choices[0]!.finish_reason).toBe('content_filter');
  });

  it('an empty candidate beside one that answered ends content_filter when its reason is no answer, not an empty stop', () => {
    const empty = (index: number, finishReason: string) => ({ index, finishReason });
    const out = toChatCompletion(
      {
        candidates: [
          empty(0, 'MALFORMED_FUNCTION_CALL'),
          { index: 1, content: { parts: [{ text: 'B' }] }, finishReason: 'STOP' },
          empty(2, 'OTHER'),
          empty(3, 'SAFETY'),
          empty(4, 'STOP'),
          { index: 5, content: { parts: [{ text: 'F' }] }, finishReason: 'MALFORMED_FUNCTION_CALL' },
        ],
      },
      ctx(),
    );
    expect(out.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, '', 'content_filter'],
      [1, 'B', 'stop'],
      [2, '', 'content_filter'],
      [3, '', 'content_filter'],
      [4, '', 'stop'], // an empty STOP is an answer, an empty one
      [5, 'F', 'stop'], // the text it has is kept, ended as it would be
    ]);
  });
});

describe('mapFinishReason', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', false, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    ['IMAGE_PROHIBITED_CONTENT', false, 'content_filter'],
    ['IMAGE_RECITATION', false, 'content_filter'],
    ['CONTINUATION', false, 'length'],
    ['OTHER', false, 'stop'],
    ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    [undefined, false, 'stop'],
  ] as const)('%s (tool calls: %s) → %s', (reason, tools, expected) => {
    expect(mapFinishReason(reason, tools)).toBe(expected);
  });

  // An empty candidate beside one that answered: one that ended for a reason that is no answer says so.
  it.each([
    ['MALFORMED_FUNCTION_CALL', 'content_filter'],
    ['UNEXPECTED_TOOL_CALL', 'content_filter'],
    ['OTHER', 'content_filter'],
    ['LANGUAGE', 'content_filter'],
    [undefined, 'content_filter'],
    ['SAFETY', 'content_filter'],
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
  ] as const)('%s, empty → %s', (reason, expected) => {
    expect(mapFinishReason(reason, false, true)).toBe(expected);
  });
});

describe('endsWithoutAnswer', () => {
  // Gemini's FinishReason enum (@google/genai 2.32), plus MISSING_THOUGHT_SIGNATURE, newer than it.
  it.each([
    ['STOP', false],
    ['MAX_TOKENS', false],
    ['CONTINUATION', false],
    ['SAFETY', false],
    ['RECITATION', false],
    ['BLOCKLIST', false],
    ['PROHIBITED_CONTENT', false],
    ['SPII', false],
    ['IMAGE_SAFETY', false],
    ['IMAGE_PROHIBITED_CONTENT', false],
    ['IMAGE_RECITATION', false],
    ['MALFORMED_FUNCTION_CALL', true],
    ['UNEXPECTED_TOOL_CALL', true],
    ['TOO_MANY_TOOL_CALLS', true],
    ['OTHER', true],
    ['LANGUAGE', true],
    ['FINISH_REASON_UNSPECIFIED', true],
    ['NO_IMAGE', true],
    ['IMAGE_OTHER', true],
    ['MISSING_THOUGHT_SIGNATURE', true],
    [undefined, true],
  ] as const)('%s → %s', (reason, expected) => {
    expect(endsWithoutAnswer(reason)).toBe(expected);
  });
});
