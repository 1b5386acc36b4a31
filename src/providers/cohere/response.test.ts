import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { cohereUsage, fromCohereResponse, mapCohereFinishReason } from './response.js';
import { toolCallChoice } from '../../../test/helpers/tool-call-choice.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const MODEL = 'command-r-plus-08-2024';
const CREATED = 1_767_225_600;
/** For a tool call without an id (the adapter's are random: tool-call-id.ts). */
const NEW_ID = () => 'call_minted';

describe('Cohere v2 chat response → OpenAI chat completion', () => {
  it('converts a text answer with billed usage', () => {
    expect(fromCohereResponse(fixture('chat-text.json'), MODEL, CREATED, NEW_ID)).toEqual({
      id: 'c14c80c3-18eb-4519-9460-6c92edd8cfb4',
      object: 'chat.completion',
      created: CREATED,
      model: MODEL,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content:
              'LLMs stand for Large Language Models, which are a type of neural network model specialized in processing and generating human language.',
            refusal: null,
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 17, completion_tokens: 24, total_tokens: 41, prompt_tokens_details: { cached_tokens: 0 } },
      system_fingerprint: null,
    });
  });

  it('converts tool calls: content null, the plan dropped, finish_reason tool_calls', () => {
    const out = fromCohereResponse(fixture('chat-tool-call.json'), MODEL, CREATED, NEW_ID);
    expect(out.choices[0]).toEqual(toolCallChoice([{ id: 'get_weather_nsz5zm3w56q3', name: 'get_weather', arguments: '{"location":"Toronto"}' }]));
    expect(out.usage).toEqual({ prompt_tokens: 37, completion_tokens: 28, total_tokens: 65 });
  });

  it('keeps text parts as content and thinking parts as reasoning_content', () => {
    const out = fromCohereResponse(
      {
        id: 'r1',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Answer.' }] },
      },
      MODEL,
      CREATED,
      NEW_ID,
    );
    expect(out.choices[0]!.message.content).toBe('Answer.');
    expect(out.choices[0]!.message.reasoning_content).toBe('hmm');
    expect(out.usage).toBeUndefined();
  });

  it('gives a tool call that came without an id a new one (a client needs one to answer it)', () => {
    const out = fromCohereResponse(
      { id: 'r2', finish_reason: 'TOOL_CALL', message: { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] } },
      MODEL,
      CREATED,
      NEW_ID,
    );
    expect(out.choices[0]!.message.tool_calls!.map((t) => t.id)).toEqual(['call_minted']);
  });

  it('maps every finish reason', () => {
    expect(
      ['COMPLETE', 'STOP_SEQUENCE', 'MAX_TOKENS', 'TOOL_CALL', 'ERROR', 'ERROR_TOXIC', 'ERROR_LIMIT', 'TIMEOUT', 'SOMETHING_NEW', undefined].map(
        mapCohereFinishReason,
      ),
    ).toEqual(['stop', 'stop', 'length', 'tool_calls', 'stop', 'content_filter', 'length', 'length', 'stop', 'stop']);
  });

  it('falls back to raw token counts when there are no billed units', () => {
    expect(cohereUsage({ tokens: { input_tokens: 70, output_tokens: 9 } })).toEqual({ prompt_tokens: 70, completion_tokens: 9, total_tokens: 79 });
    expect(cohereUsage({})).toBeUndefined();
  });

  it('treats a body without a message as the upstream failing', () => {
    for (const body of [{ id: 'x' }, [], null, { message: {} }]) {
      let err: unknown;
      try {
        fromCohereResponse(body, MODEL, CREATED, NEW_ID);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UpstreamError);
      expect((err as UpstreamError).category).toBe('server');
    }
  });
});
