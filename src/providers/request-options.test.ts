/**
 * The request options every native adapter reads the same way (found by a
 * request-direction fuzz: explicit nulls and newer tool_choice shapes crashed
 * three converters with a TypeError; unknown response formats became JSON
 * mode; n > 1 came back as one choice, or a broken stream).
 */
import { describe, expect, it } from 'vitest';
import { validateChatRequest } from '../protocol/validate.js';
import type { ChatRequest } from '../protocol/openai.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import { toAnthropicRequest } from './anthropic/convert-request.js';
import { toCohereRequest } from './cohere/request.js';
import { toGenerateContentRequest } from './gemini/convert-request.js';
import { toOllamaRequest } from './ollama/request.js';

const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const time = { type: 'function' as const, function: { name: 'get_time' } };
const base = (extra: Record<string, unknown>): ChatRequest =>
  validateChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [weather, time], ...extra });

const CONVERTERS = {
  anthropic: (r: ChatRequest) => toAnthropicRequest(r, 'claude', false).body as unknown as Record<string, unknown>,
  gemini: (r: ChatRequest) => toGenerateContentRequest(r) as unknown as Record<string, unknown>,
  cohere: (r: ChatRequest) => toCohereRequest(r, 'command', false) as unknown as Record<string, unknown>,
  ollama: (r: ChatRequest) => toOllamaRequest(r, 'llama', false) as unknown as Record<string, unknown>,
};

/** The converter's refusal: an invalid_request naming the provider (never a TypeError). */
function refusal(convert: (r: ChatRequest) => unknown, req: ChatRequest): UpstreamError {
  try {
    convert(req);
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).category).toBe('invalid_request');
    return err as UpstreamError;
  }
  throw new Error('converted, where a refusal was expected');
}

describe.each(Object.entries(CONVERTERS))('%s', (provider, convert) => {
  it('reads null tool_choice, response_format and stop as absent', () => {
    const plain = convert(base({}));
    expect(convert(base({ tool_choice: null, response_format: null, stop: null }))).toEqual(plain);
  });

  it('offers only the allowed tools of an allowed_tools choice, in its mode', () => {
    const allowed = (mode: string) => base({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode, tools: [{ type: 'function', function: { name: 'get_time' } }] } } });
    const names = JSON.stringify(convert(allowed('required')));
    expect(names).toContain('get_time');
    expect(names).not.toContain('get_weather');
    expect(JSON.stringify(convert(allowed('auto')))).not.toContain('get_weather');
    const none = base({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'nope' } }] } } });
    expect(refusal(convert, none).message).toMatch(/allowed_tools/);
  });

  it('refuses a custom tool, which only OpenAI-compatible upstreams take', () => {
    expect(refusal(convert, base({ tools: [weather, { type: 'custom', custom: { name: 'grammar' } }] })).message).toMatch(new RegExp(`"custom" are not supported by ${provider}`));
  });

  it('refuses a tool_choice or response_format type it cannot honour, naming the provider', () => {
    expect(refusal(convert, base({ tool_choice: { type: 'custom', custom: { name: 'grammar_tool' } } })).message).toContain(provider);
    expect(refusal(convert, base({ response_format: { type: 'grammar', grammar: 'x' } })).message).toContain(provider);
    // validateChatRequest refuses this one first; the adapters' own check stays for requests built in-process.
    expect(refusal(convert, { ...base({}), response_format: { type: 'json_schema', json_schema: 'x' } } as unknown as ChatRequest).param).toBe('response_format.json_schema');
  });

  it("refuses a logit_bias (OpenAI's token ids) and a web search rather than dropping them; an empty bias is none", () => {
    expect(refusal(convert, base({ logit_bias: { '50256': -100 } })).param).toBe('logit_bias');
    expect(convert(base({ logit_bias: {} }))).toEqual(convert(base({})));
    expect(refusal(convert, base({ web_search_options: {} })).param).toBe('web_search_options');
  });

  it('gives a tool whose parameters name no type an object schema', () => {
    const req = base({ tools: [{ type: 'function', function: { name: 'f', parameters: { properties: { a: { type: 'string' } } } } }] });
    const out = convert(req) as { tools: Record<string, unknown>[] };
    const tool = out.tools[0]!;
    // Each format's own place for the schema: Anthropic input_schema, Gemini's declarations, Cohere's and Ollama's function.parameters.
    const schema = (tool.input_schema ?? (tool.functionDeclarations as { parameters: unknown }[] | undefined)?.[0]?.parameters ?? (tool.function as { parameters: unknown }).parameters) as { type: string };
    expect(schema.type.toLowerCase()).toBe('object');
  });
});

describe('n > 1', () => {
  it('is refused by the providers that answer one choice, and asked of Gemini as candidateCount', () => {
    for (const provider of ['anthropic', 'cohere', 'ollama'] as const) {
      expect(refusal(CONVERTERS[provider], base({ n: 3 })).param).toBe('n');
      expect(() => CONVERTERS[provider](base({ n: 1 }))).not.toThrow();
    }
    expect(CONVERTERS.gemini(base({ n: 3 }))).toMatchObject({ generationConfig: { candidateCount: 3 } });
  });
});

describe('validateChatRequest', () => {
  it('refuses a tool_choice or stop of the wrong shape, for every provider alike', () => {
    for (const tool_choice of [5, 'bogus', { type: 'function' }, { type: 'function', function: {} }, { type: 'allowed_tools', allowed_tools: { mode: 'x', tools: [] } }]) {
      expect(() => base({ tool_choice }), JSON.stringify(tool_choice)).toThrow(/'tool_choice' must be/);
    }
    for (const stop of [5, { a: 1 }, [null], ['ok', 3]]) expect(() => base({ stop }), JSON.stringify(stop)).toThrow(/'stop' must be/);
    expect(() => base({ stop: ['a', 'b'], tool_choice: { type: 'function', function: { name: 'get_time' } } })).not.toThrow();
  });
});

describe('Cohere ranges', () => {
  it('clamps top_p and the penalties into what Cohere takes', () => {
    const out = toCohereRequest(base({ top_p: 1, frequency_penalty: -1.5, presence_penalty: 1.5 }), 'command', false);
    expect(out).toMatchObject({ p: 0.99, frequency_penalty: 0, presence_penalty: 1 });
    expect(toCohereRequest(base({ top_p: 0 }), 'command', false).p).toBe(0.01);
  });
});

describe('legacy function calling in the history (found by fuzzing: the call was dropped, the result merged into a user turn)', () => {
  const history = (): ChatRequest =>
    validateChatRequest({
      model: 'm',
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { role: 'function', name: 'get_weather', content: 'FRES' },
      ],
      tools: [weather],
    });

  it('reaches Anthropic as a tool_use and its tool_result', () => {
    const { messages } = toAnthropicRequest(history(), 'claude', false).body;
    expect(messages[1]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'call_legacy_1', name: 'get_weather', input: { city: 'Paris' } }] });
    expect(messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_legacy_1', content: 'FRES' }] });
  });

  it('reaches Cohere as a tool call and the tool result answering its id', () => {
    const { messages } = toCohereRequest(history(), 'command', false);
    expect(messages[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_legacy_1', function: { name: 'get_weather' } }] });
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_legacy_1', content: 'FRES' });
  });

  it('reaches Ollama as a tool call and a tool message naming it', () => {
    const { messages } = toOllamaRequest(history(), 'llama', false);
    expect(messages[1]).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] });
    expect(messages[2]).toMatchObject({ role: 'tool', content: 'FRES', tool_name: 'get_weather' });
  });
});

describe('Anthropic tool history', () => {
  const withCall = (id: string, tools?: unknown[]): ChatRequest =>
    validateChatRequest({
      model: 'm',
      messages: [
        { role: 'user', content: 'time?' },
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: id, content: '12:00' },
      ],
      ...(tools ? { tools } : {}),
    });

  it("maps other servers' tool ids into the characters Anthropic takes, alike in the call and its result", () => {
    const { messages } = toAnthropicRequest(withCall('functions.get_time:0', [time]), 'claude', false).body;
    expect(JSON.stringify(messages)).toContain('"id":"functions_get_time_0"');
    expect(JSON.stringify(messages)).toContain('"tool_use_id":"functions_get_time_0"');
  });

  it('keeps ids apart that map to the same characters (found by review)', () => {
    const req = validateChatRequest({
      model: 'm',
      messages: [
        { role: 'user', content: 'time?' },
        { role: 'assistant', content: null, tool_calls: ['a.b', 'a:b', 'a_b'].map((id) => ({ id, type: 'function', function: { name: 'get_time', arguments: '{}' } })) },
        ...['a:b', 'a_b', 'a.b'].map((id) => ({ role: 'tool', tool_call_id: id, content: id })),
      ],
      tools: [time],
    });
    const { messages } = toAnthropicRequest(req, 'claude', false).body;
    const uses = (messages[1]!.content as { id: string }[]).map((b) => b.id);
    expect(new Set(uses).size).toBe(3);
    // Each result answers its own call: the call whose original id is its content.
    const results = messages[2]!.content as { tool_use_id: string; content: string }[];
    for (const r of results) expect(uses[['a.b', 'a:b', 'a_b'].indexOf(r.content)]).toBe(r.tool_use_id);
  });

  it('declares the tools a history used when the request offers none, and forbids new calls', () => {
    const { body } = toAnthropicRequest(withCall('toolu_1'), 'claude', false);
    expect(body.tools).toEqual([{ name: 'get_time', input_schema: { type: 'object', properties: {} } }]);
    expect(body.tool_choice).toEqual({ type: 'none' });
  });
});

describe('what a provider refuses in other words, refused here (request-direction fuzz)', () => {
  it('Gemini and Cohere: tools with a JSON response format', () => {
    const req = base({ response_format: { type: 'json_object' } });
    expect(refusal(CONVERTERS.gemini, req).message).toMatch(/gemini cannot combine tools/);
    expect(refusal(CONVERTERS.cohere, req).message).toMatch(/cohere cannot combine tools/);
    expect(() => CONVERTERS.anthropic(req)).not.toThrow(); // JSON mode is an instruction there
    // With tool_choice none the tools are left out, and the format honoured (found by review).
    const noCalls = base({ response_format: { type: 'json_object' }, tool_choice: 'none' });
    expect(CONVERTERS.gemini(noCalls)).toMatchObject({ generationConfig: { responseMimeType: 'application/json' } });
    expect(CONVERTERS.gemini(noCalls).tools).toBeUndefined();
    expect(CONVERTERS.cohere(noCalls)).toMatchObject({ response_format: { type: 'json_object' } });
    expect(CONVERTERS.cohere(noCalls).tools).toBeUndefined();
  });

  it('Anthropic: an image data URL without a media type, which it would refuse (found by review)', () => {
    const image = (url: string) => validateChatRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
    expect(refusal(CONVERTERS.anthropic, image('data:;base64,iVBORw0KGgo=')).message).toMatch(/without a media type/);
    expect(JSON.stringify(CONVERTERS.anthropic(image('data:image/png;base64,iVBORw0KGgo%3D')))).toContain('"media_type":"image/png","data":"iVBORw0KGgo="');
  });

  it('Anthropic and Gemini: a system-only request becomes the user turn; one with no text at all is refused', () => {
    const systemOnly = validateChatRequest({ model: 'm', messages: [{ role: 'system', content: 'Say hi.' }] });
    expect(toAnthropicRequest(systemOnly, 'claude', false).body.messages).toEqual([{ role: 'user', content: 'Say hi.' }]);
    const empty = validateChatRequest({ model: 'm', messages: [{ role: 'user', content: '' }] });
    refusal(CONVERTERS.anthropic, empty);
    refusal(CONVERTERS.gemini, empty);
  });
});
