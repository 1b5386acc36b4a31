import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { toCohereRequest } from './request.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const MODEL = 'command-r-plus-08-2024';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Gets the weather for a location',
    parameters: { type: 'object', properties: { location: { type: 'string', description: 'the city' } }, required: ['location'] },
  },
};

describe('OpenAI request → Cohere v2 /v2/chat body', () => {
  it('converts system, multi-turn, tool calls, tool results, images and sampling settings', () => {
    const req: ChatRequest = {
      model: 'weather',
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        { role: 'user', content: 'Weather in Toronto?' },
        {
          role: 'assistant',
          content: 'I will check the weather.',
          tool_calls: [{ id: 'get_weather_nsz5zm3w56q3', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Toronto"}' } }],
        },
        { role: 'tool', tool_call_id: 'get_weather_nsz5zm3w56q3', content: '{"temperature":"20C"}' },
        { role: 'assistant', content: 'It is 20C in Toronto.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And what is in this picture?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          ],
        },
      ],
      tools: [weatherTool],
      tool_choice: 'required',
      max_tokens: 300,
      temperature: 0.3,
      top_p: 0.9,
      stop: 'END',
      seed: 7,
      user: 'u-1',
    };
    expect(toCohereRequest(req, MODEL, false)).toEqual(fixture('request-multi-turn-tools.json'));
  });

  it('maps developer messages and text-part arrays to a system string', () => {
    const out = toCohereRequest(
      { model: 'x', messages: [{ role: 'developer', content: [{ type: 'text', text: 'Be ' }, { type: 'text', text: 'brief.' }] }, { role: 'user', content: 'hi' }] },
      MODEL,
      true,
    );
    expect(out.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(out.stream).toBe(true);
  });

  it('sends reasoning_effort to reasoning models only, as thinking with a token budget (disabled for none)', () => {
    const ask = (reasoning_effort: string | undefined, model: string) =>
      toCohereRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], reasoning_effort }, model, false).thinking;
    const reasoning = 'command-a-reasoning-08-2025';
    expect(ask('low', reasoning)).toEqual({ type: 'enabled', token_budget: 2048 });
    expect(ask('high', reasoning)).toEqual({ type: 'enabled', token_budget: 16384 });
    expect(ask('none', reasoning)).toEqual({ type: 'disabled' });
    expect(ask(undefined, reasoning)).toBeUndefined();
    expect(ask('ultra', reasoning)).toBeUndefined();
    // A model that does not reason has nothing to switch.
    expect(ask('high', MODEL)).toBeUndefined();
    expect(ask('none', MODEL)).toBeUndefined();
  });

  it('widens a small max_tokens by the thinking budget, which Cohere counts in it, within the 32K output limit', () => {
    const ask = (reasoning_effort: string | undefined, max_tokens: number | undefined, model = 'command-a-reasoning-08-2025') => {
      const out = toCohereRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], reasoning_effort, max_tokens }, model, false);
      return { max: out.max_tokens, thinking: out.thinking };
    };
    // 300 beside an 8K budget: the answer keeps its 300, the budget goes on top.
    expect(ask('medium', 300)).toEqual({ max: 8492, thinking: { type: 'enabled', token_budget: 8192 } });
    // A limit that leaves the answer 1K beside the budget is the client's as it is.
    expect(ask('medium', 9216)).toEqual({ max: 9216, thinking: { type: 'enabled', token_budget: 8192 } });
    // Past the model's output limit the budget shrinks: the answer still gets its 20000.
    expect(ask('xhigh', 20_000)).toEqual({ max: 32_000, thinking: { type: 'enabled', token_budget: 12_000 } });
    // No client limit, thinking off, a model that does not think, no effort: nothing to widen.
    expect(ask('medium', undefined).max).toBeUndefined();
    expect(ask('none', 300)).toEqual({ max: 300, thinking: { type: 'disabled' } });
    expect(ask('high', 300, MODEL)).toEqual({ max: 300, thinking: undefined });
    expect(ask(undefined, 300)).toEqual({ max: 300, thinking: undefined });
  });

  it('prefers max_completion_tokens over max_tokens', () => {
    const out = toCohereRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, max_completion_tokens: 20 }, MODEL, false);
    expect(out.max_tokens).toBe(20);
  });

  it('maps response_format json_object and json_schema onto Cohere json_object', () => {
    const base: ChatRequest = { model: 'x', messages: [{ role: 'user', content: 'json please' }] };
    expect(toCohereRequest({ ...base, response_format: { type: 'json_object' } }, MODEL, false).response_format).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] };
    expect(
      toCohereRequest({ ...base, response_format: { type: 'json_schema', json_schema: { name: 'p', schema } } }, MODEL, false).response_format,
    ).toEqual({ type: 'json_object', json_schema: schema });
    expect(toCohereRequest({ ...base, response_format: { type: 'text' } }, MODEL, false).response_format).toBeUndefined();
  });

  it('maps tool_choice none, auto, and a named tool (only that tool, REQUIRED)', () => {
    const other = { type: 'function' as const, function: { name: 'get_time' } };
    const base: ChatRequest = { model: 'x', messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool, other] };
    expect(toCohereRequest({ ...base, tool_choice: 'none' }, MODEL, false).tool_choice).toBe('NONE');
    expect(toCohereRequest({ ...base, tool_choice: 'auto' }, MODEL, false).tool_choice).toBeUndefined();
    const named = toCohereRequest({ ...base, tool_choice: { type: 'function', function: { name: 'get_time' } } }, MODEL, false);
    expect(named.tool_choice).toBe('REQUIRED');
    // A tool without parameters still needs Cohere's required `parameters`.
    expect(named.tools).toEqual([{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }]);
  });

  it('asks for strict tools when any tool is strict', () => {
    const strict = { type: 'function' as const, function: { ...weatherTool.function, strict: true } };
    expect(toCohereRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }], tools: [strict] }, MODEL, false).strict_tools).toBe(true);
  });

  it('refuses content parts Cohere cannot take, as invalid_request', () => {
    const req: ChatRequest = { model: 'x', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] };
    const err = (() => {
      try {
        toCohereRequest(req, MODEL, false);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).category).toBe('invalid_request');
    expect((err as UpstreamError).message).toMatch(/input_audio/);
  });
});
