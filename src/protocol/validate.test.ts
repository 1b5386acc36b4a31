import { describe, expect, it } from 'vitest';
import { GatewayError } from '../core/errors.js';
import { validateChatRequest, validateEmbeddingsRequest } from './validate.js';

const base = () => ({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] as unknown[] });

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a 400');
}

describe('validateChatRequest: valid bodies pass unchanged', () => {
  const valid: [string, Record<string, unknown>][] = [
    ['minimal', base()],
    [
      'everything the gateway reads, plus fields it does not know',
      {
        model: 'oa/gpt-4o-mini',
        messages: [
          { role: 'developer', content: 'be brief' },
          { role: 'system', content: [{ type: 'text', text: 'sys' }] },
          { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==', detail: 'low' } }, { type: 'input_audio', input_audio: {} }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: '42' },
          { role: 'assistant', content: '' },
          { role: 'function', name: 'f', content: 'legacy' },
        ],
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 1,
        max_completion_tokens: 10_000_000,
        temperature: 0,
        top_p: 1,
        n: 128,
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: 'auto',
        response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } },
        logit_bias: { '50256': -100 },
        some_future_param: { nested: true },
      },
    ],
    ['nulls where OpenAI allows them', { ...base(), stream: null, stream_options: null, max_tokens: null, temperature: null, tools: null, response_format: null }],
    ['temperature 2 and top_p 0 are inside the range', { ...base(), temperature: 2, top_p: 0 }],
    ['a model name of 256 characters', { ...base(), model: 'm'.repeat(256) }],
    [
      'tool names of letters, digits, underscores, dashes and dots, up to 64',
      { ...base(), tools: ['get_weather', 'get-time', 'ns.tool', 'A1', 'f'.repeat(64)].map((name) => ({ type: 'function', function: { name } })) },
    ],
    ['penalties, a seed, and a custom tool beside a function', { ...base(), presence_penalty: -2, frequency_penalty: 2, seed: 42, tools: [{ type: 'custom', custom: { name: 'grammar' } }, { type: 'function', function: { name: 'f' } }] }],
    ['stop as a string or a list, tool_choice as OpenAI takes it', { ...base(), stop: ['a', 'b'], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'f' } }] } } }],
    ['tool parameters and description null, as some clients send them', { ...base(), tools: [{ type: 'function', function: { name: 'f', parameters: null, description: null } }] }],
    ['a legacy function result with null content, as OpenAI takes it', { ...base(), messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'f', content: null }] }],
    [
      'legacy functions, each function_call form, and nulls',
      { ...base(), functions: [{ name: 'f', description: 'd', parameters: { type: 'object' } }, { name: 'g' }, { name: 'h', parameters: null, description: null }], function_call: { name: 'f' } },
    ],
    ['function_call none or auto, functions and function_call null', { ...base(), functions: null, function_call: 'auto' }],
    ['an assistant message without content', { ...base(), messages: [{ role: 'user', content: 'a' }, { role: 'assistant' }] }],
  ];
  it.each(valid)('%s', (_name, body) => {
    const snapshot = JSON.stringify(body);
    expect(validateChatRequest(body)).toBe(body);
    expect(JSON.stringify(body)).toBe(snapshot);
  });
});

describe('validateChatRequest: each malformed body is a 400 naming its param', () => {
  const bad: [string, unknown, string | null][] = [
    ['not an object', 'hello', null],
    ['null', null, null],
    ['an array', [base()], null],
    ['no model', { messages: base().messages }, 'model'],
    ['empty model', { ...base(), model: '' }, 'model'],
    ['model not a string', { ...base(), model: 42 }, 'model'],
    ['a model name longer than any (found by a soak: the trace store kept such strings)', { ...base(), model: 'm'.repeat(257) }, 'model'],
    ['stop as a number', { ...base(), stop: 5 }, 'stop'],
    ['presence_penalty outside -2..2', { ...base(), presence_penalty: 5 }, 'presence_penalty'],
    ['frequency_penalty as a string', { ...base(), frequency_penalty: '1' }, 'frequency_penalty'],
    ['seed as a string', { ...base(), seed: 'abc' }, 'seed'],
    ['a tool of an unknown type', { ...base(), tools: [{ type: 'code_interpreter', function: { name: 'f' } }] }, 'tools[0].type'],
    ["a tool without a type (OpenAI: \"Missing required parameter: 'tools[0].type'\")", { ...base(), tools: [{ function: { name: 'f' } }] }, 'tools[0].type'],
    ['an empty tool name (the audit)', { ...base(), tools: [{ type: 'function', function: { name: '' } }] }, 'tools[0].function.name'],
    ['a tool name with a space', { ...base(), tools: [{ type: 'function', function: { name: 'ok' } }, { type: 'function', function: { name: 'get weather' } }] }, 'tools[1].function.name'],
    ['a tool name with a slash (an MCP path)', { ...base(), tools: [{ type: 'function', function: { name: 'server/tool' } }] }, 'tools[0].function.name'],
    ['a tool name that is not ASCII', { ...base(), tools: [{ type: 'function', function: { name: '検索' } }] }, 'tools[0].function.name'],
    ['a tool name over 64 characters', { ...base(), tools: [{ type: 'function', function: { name: 'f'.repeat(65) } }] }, 'tools[0].function.name'],
    ['a custom tool without its custom', { ...base(), tools: [{ type: 'custom', function: { name: 'f' } }] }, 'tools[0]'],
    ['a legacy function name with a space', { ...base(), functions: [{ name: 'get weather' }] }, 'functions[0].name'],
    ['tool_choice of no known shape', { ...base(), tool_choice: { type: 'function' } }, 'tool_choice'],
    ['no messages', { model: 'fast' }, 'messages'],
    ['empty messages', { ...base(), messages: [] }, 'messages'],
    ['messages not an array', { ...base(), messages: { role: 'user', content: 'x' } }, 'messages'],
    ['a message that is not an object', { ...base(), messages: [{ role: 'user', content: 'a' }, 'b'] }, 'messages[1]'],
    ['a message without a role', { ...base(), messages: [{ content: 'x' }] }, 'messages[0].role'],
    ['an unknown role', { ...base(), messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['a user message without content', { ...base(), messages: [{ role: 'user' }] }, 'messages[0].content'],
    ['a user message with null content', { ...base(), messages: [{ role: 'user', content: null }] }, 'messages[0].content'],
    ['content that is a number', { ...base(), messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    ['content that is an object', { ...base(), messages: [{ role: 'user', content: { text: 'x' } }] }, 'messages[0].content'],
    ['a part without a type', { ...base(), messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 'messages[0].content[0]'],
    ['a part that is a string', { ...base(), messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, 'b'] }] }, 'messages[0].content[1]'],
    ['a text part without text', { ...base(), messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
    ['an image part without a url', { ...base(), messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }, 'messages[0].content[0].image_url'],
    ['an image part with a string image_url', { ...base(), messages: [{ role: 'user', content: [{ type: 'image_url', image_url: 'http://x' }] }] }, 'messages[0].content[0].image_url'],
    ['a tool message without tool_call_id', { ...base(), messages: [{ role: 'tool', content: '42' }] }, 'messages[0].tool_call_id'],
    ['a tool call id that is not a string (Anthropic\'s id mapping threw on it: a 500)', { ...base(), messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: null, tool_calls: [{ id: 5, type: 'function', function: { name: 'f', arguments: '{}' } }] }] }, 'messages[1].tool_calls[0].id'],
    ['assistant tool_calls not an array', { ...base(), messages: [{ role: 'assistant', content: null, tool_calls: {} }] }, 'messages[0].tool_calls'],
    ['stream as a string', { ...base(), stream: 'true' }, 'stream'],
    ['stream_options as a boolean', { ...base(), stream_options: true }, 'stream_options'],
    ['max_tokens 0', { ...base(), max_tokens: 0 }, 'max_tokens'],
    ['max_tokens fractional', { ...base(), max_tokens: 1.5 }, 'max_tokens'],
    ['max_tokens as a string', { ...base(), max_tokens: '100' }, 'max_tokens'],
    ['max_completion_tokens negative', { ...base(), max_completion_tokens: -1 }, 'max_completion_tokens'],
    ['temperature above 2', { ...base(), temperature: 2.5 }, 'temperature'],
    ['temperature below 0', { ...base(), temperature: -0.1 }, 'temperature'],
    ['top_p above 1', { ...base(), top_p: 1.01 }, 'top_p'],
    ['n 0', { ...base(), n: 0 }, 'n'],
    ['n above 128', { ...base(), n: 129 }, 'n'],
    ['tools not an array', { ...base(), tools: { type: 'function' } }, 'tools'],
    ['a tool without a function', { ...base(), tools: [{ type: 'function' }] }, 'tools[0]'],
    ['a tool without a name', { ...base(), tools: [{ type: 'function', function: { name: 'ok' } }, { type: 'function', function: {} }] }, 'tools[1]'],
    ['tool parameters that are no object (adapters made a schema of a string\'s characters)', { ...base(), tools: [{ type: 'function', function: { name: 'f', parameters: 'object' } }] }, 'tools[0].function.parameters'],
    ['tool parameters that are an array', { ...base(), tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }, { type: 'function', function: { name: 'g', parameters: [] } }] }, 'tools[1].function.parameters'],
    ['a tool description that is not a string', { ...base(), tools: [{ type: 'function', function: { name: 'f', description: 5 } }] }, 'tools[0].function.description'],
    ['functions not an array', { ...base(), functions: { name: 'f' } }, 'functions'],
    ['a function without a name', { ...base(), functions: [{ name: 'f' }, { description: 'no name' }] }, 'functions[1]'],
    ['a function that is no object', { ...base(), functions: ['f'] }, 'functions[0]'],
    ['function parameters that are no object', { ...base(), functions: [{ name: 'f', parameters: 'object' }] }, 'functions[0].parameters'],
    ['a function description that is not a string', { ...base(), functions: [{ name: 'f', description: ['d'] }] }, 'functions[0].description'],
    ['function_call of another mode', { ...base(), functions: [{ name: 'f' }], function_call: 'required' }, 'function_call'],
    ['function_call in the tool_choice shape', { ...base(), functions: [{ name: 'f' }], function_call: { type: 'function', function: { name: 'f' } } }, 'function_call'],
    ['response_format as a string', { ...base(), response_format: 'json' }, 'response_format'],
    ['response_format without a type', { ...base(), response_format: {} }, 'response_format'],
  ];
  it.each(bad)('%s → param %s', (_name, body, param) => {
    const e = refusal(() => validateChatRequest(body));
    expect([e.status, e.code, e.type, e.param]).toEqual([400, 'invalid_request', 'invalid_request_error', param]);
    expect(e.toBody().error.param).toBe(param);
  });

  it('reports the first problem in document order', () => {
    const e = refusal(() => validateChatRequest({ model: 'fast', messages: [{ role: 'user', content: 'ok' }, { role: 'x' }], temperature: 9 }));
    expect(e.param).toBe('messages[1].role');
  });

  it('never echoes message content into the error', () => {
    const e = refusal(() => validateChatRequest({ model: 'fast', messages: [{ role: 'user', content: [{ type: 'text', text: 42, secret: 'PROMPT-TEXT' }] }] }));
    expect(e.message).not.toContain('PROMPT-TEXT');
  });
});

describe('validateChatRequest: the options OpenAI checks, checked alike', () => {
  const streamed = () => ({ ...base(), stream: true });
  const nullable = [
    'stream_options', 'logprobs', 'top_logprobs', 'logit_bias', 'response_format', 'modalities', 'audio', 'prediction', 'metadata', 'web_search_options',
    'parallel_tool_calls', 'store', 'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier', 'reasoning_effort', 'verbosity',
  ];
  const valid: [string, Record<string, unknown>][] = [
    ['each option null, as OpenAI takes null for absent', { ...base(), ...Object.fromEntries(nullable.map((k) => [k, null])) }],
    ['stream_options with both flags on a stream', { ...streamed(), stream_options: { include_usage: false, include_obfuscation: false } }],
    ['logprobs with 20 alternatives', { ...base(), logprobs: true, top_logprobs: 20 }],
    ['top_logprobs 0 without logprobs (nothing asked of it)', { ...base(), top_logprobs: 0 }],
    ['logit_bias at both ends, and fractional', { ...base(), logit_bias: { '50256': -100, '1': 100, '2': 0.5 } }],
    ['an empty logit_bias', { ...base(), logit_bias: {} }],
    ['a json_schema without schema, strict null', { ...base(), response_format: { type: 'json_schema', json_schema: { name: 'my-schema_1', strict: null } } }],
    ['a json_schema with every field', { ...base(), response_format: { type: 'json_schema', json_schema: { name: 'n'.repeat(64), description: 'd', schema: { type: 'object' }, strict: true } } }],
    ['response_format text', { ...base(), response_format: { type: 'text' } }],
    ["vLLM's structural_tag, for an OpenAI-compatible upstream", { ...base(), response_format: { type: 'structural_tag', format: { type: 'triggered_tags' } } }],
    ["Fireworks' grammar", { ...base(), response_format: { type: 'grammar', grammar: 'root ::= "a"' } }],
    ['audio output with a built-in voice', { ...base(), modalities: ['text', 'audio'], audio: { format: 'wav', voice: 'alloy' } }],
    ['a custom voice, and a format or modality OpenAI may add later', { ...base(), modalities: ['text', 'video'], audio: { format: 'ogg', voice: { id: 'voice_1234' } } }],
    ['a prediction as a string', { ...base(), prediction: { type: 'content', content: 'the old file' } }],
    ['a prediction as text parts', { ...base(), prediction: { type: 'content', content: [{ type: 'text', text: 'a' }] } }],
    ['a prediction of a type OpenAI may add later', { ...base(), prediction: { type: 'diff', patch: 'x' } }],
    ['metadata at its limits', { ...base(), metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, 'k'), 'v'.repeat(512)])) }],
    ['web search options', { ...base(), web_search_options: { search_context_size: 'low', user_location: { type: 'approximate', approximate: { city: 'Paris' } } } }],
    ['empty web search options', { ...base(), web_search_options: {} }],
    [
      'flags and identifiers',
      { ...base(), parallel_tool_calls: false, store: true, user: 'u-1', safety_identifier: 's'.repeat(64), prompt_cache_key: 'k', prompt_cache_retention: '24h' },
    ],
    ['enumerations OpenAI grows, with values it has not named yet', { ...base(), service_tier: 'flex-2030', reasoning_effort: 'max', verbosity: 'terse' }],
  ];
  it.each(valid)('pass: %s', (_name, body) => {
    const snapshot = JSON.stringify(body);
    expect(validateChatRequest(body)).toBe(body);
    expect(JSON.stringify(body)).toBe(snapshot);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['a response_format type OpenAI has not (the audit: xml)', { ...base(), response_format: { type: 'xml' } }, 'response_format.type'],
    ['json_schema without its json_schema', { ...base(), response_format: { type: 'json_schema' } }, 'response_format.json_schema'],
    ['json_schema whose json_schema is a string', { ...base(), response_format: { type: 'json_schema', json_schema: 'x' } }, 'response_format.json_schema'],
    ['json_schema without a name', { ...base(), response_format: { type: 'json_schema', json_schema: { schema: {} } } }, 'response_format.json_schema.name'],
    ['a json_schema name with a space', { ...base(), response_format: { type: 'json_schema', json_schema: { name: 'my schema' } } }, 'response_format.json_schema.name'],
    ['a json_schema name over 64 characters', { ...base(), response_format: { type: 'json_schema', json_schema: { name: 'n'.repeat(65) } } }, 'response_format.json_schema.name'],
    ['a json_schema schema that is a string', { ...base(), response_format: { type: 'json_schema', json_schema: { name: 's', schema: 'object' } } }, 'response_format.json_schema.schema'],
    ['json_schema strict as a string', { ...base(), response_format: { type: 'json_schema', json_schema: { name: 's', strict: 'yes' } } }, 'response_format.json_schema.strict'],
    ['a json_schema description that is a number', { ...base(), response_format: { type: 'json_schema', json_schema: { name: 's', description: 5 } } }, 'response_format.json_schema.description'],
    ['logprobs as a string (the audit)', { ...base(), logprobs: 'x' }, 'logprobs'],
    ['top_logprobs -1 (the audit)', { ...base(), logprobs: true, top_logprobs: -1 }, 'top_logprobs'],
    ['top_logprobs above 20', { ...base(), logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
    ['top_logprobs fractional', { ...base(), logprobs: true, top_logprobs: 1.5 }, 'top_logprobs'],
    ['top_logprobs as a string', { ...base(), logprobs: true, top_logprobs: '5' }, 'top_logprobs'],
    ['top_logprobs without logprobs', { ...base(), top_logprobs: 5 }, 'top_logprobs'],
    ['top_logprobs with logprobs false', { ...base(), logprobs: false, top_logprobs: 1 }, 'top_logprobs'],
    ['include_usage as a string (the audit)', { ...streamed(), stream_options: { include_usage: 'yes' } }, 'stream_options.include_usage'],
    ['include_obfuscation as a number', { ...streamed(), stream_options: { include_obfuscation: 1 } }, 'stream_options.include_obfuscation'],
    ['stream_options without stream', { ...base(), stream_options: { include_usage: true } }, 'stream_options'],
    ['stream_options with stream false', { ...base(), stream: false, stream_options: {} }, 'stream_options'],
    ['logit_bias as a number (the audit)', { ...base(), logit_bias: 5 }, 'logit_bias'],
    ['logit_bias as an array', { ...base(), logit_bias: [1] }, 'logit_bias'],
    ['a logit_bias key that is a word, not a token id', { ...base(), logit_bias: { hello: 1 } }, 'logit_bias'],
    ['a negative logit_bias key', { ...base(), logit_bias: { '-1': 1 } }, 'logit_bias'],
    ['a logit_bias above 100', { ...base(), logit_bias: { '50256': 101 } }, 'logit_bias'],
    ['a logit_bias as a string', { ...base(), logit_bias: { '50256': '5' } }, 'logit_bias'],
    ['user as an object (the audit)', { ...base(), user: {} }, 'user'],
    ['user as a number', { ...base(), user: 5 }, 'user'],
    ['modalities as a number (the audit)', { ...base(), modalities: 5 }, 'modalities'],
    ['modalities with a number in it', { ...base(), modalities: ['text', 1] }, 'modalities'],
    ['audio as a string', { ...base(), audio: 'alloy' }, 'audio'],
    ['audio without a format', { ...base(), audio: { voice: 'alloy' } }, 'audio.format'],
    ['audio without a voice', { ...base(), audio: { format: 'wav' } }, 'audio.voice'],
    ['an audio voice object without an id', { ...base(), audio: { format: 'wav', voice: { name: 'alloy' } } }, 'audio.voice'],
    ['prediction as a string', { ...base(), prediction: 'the old file' }, 'prediction'],
    ['prediction without a type', { ...base(), prediction: { content: 'x' } }, 'prediction'],
    ['prediction content as a number', { ...base(), prediction: { type: 'content', content: 5 } }, 'prediction.content'],
    ['prediction content with an image part', { ...base(), prediction: { type: 'content', content: [{ type: 'image_url', image_url: { url: 'x' } }] } }, 'prediction.content'],
    ['metadata as a string', { ...base(), metadata: 'x' }, 'metadata'],
    ['a metadata value that is a number', { ...base(), metadata: { a: 1 } }, 'metadata'],
    ['17 metadata pairs', { ...base(), metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    ['a metadata key over 64 characters', { ...base(), metadata: { ['k'.repeat(65)]: 'v' } }, 'metadata'],
    ['a metadata value over 512 characters', { ...base(), metadata: { k: 'v'.repeat(513) } }, 'metadata'],
    ['web_search_options as a string', { ...base(), web_search_options: 'on' }, 'web_search_options'],
    ['a search_context_size that is a number', { ...base(), web_search_options: { search_context_size: 3 } }, 'web_search_options.search_context_size'],
    ['a user_location that is a string', { ...base(), web_search_options: { user_location: 'Paris' } }, 'web_search_options.user_location'],
    ['parallel_tool_calls as a string', { ...base(), parallel_tool_calls: 'false' }, 'parallel_tool_calls'],
    ['store as a number', { ...base(), store: 1 }, 'store'],
    ['a safety_identifier over 64 characters', { ...base(), safety_identifier: 's'.repeat(65) }, 'safety_identifier'],
    ['a safety_identifier that is a number', { ...base(), safety_identifier: 5 }, 'safety_identifier'],
    ['prompt_cache_key as a number', { ...base(), prompt_cache_key: 5 }, 'prompt_cache_key'],
    ['prompt_cache_retention as a number', { ...base(), prompt_cache_retention: 24 }, 'prompt_cache_retention'],
    ['service_tier as a number', { ...base(), service_tier: 1 }, 'service_tier'],
    ['reasoning_effort as an object', { ...base(), reasoning_effort: { effort: 'low' } }, 'reasoning_effort'],
    ['verbosity as an array', { ...base(), verbosity: ['low'] }, 'verbosity'],
  ];
  it.each(bad)('refuse: %s → param %s', (_name, body, param) => {
    const e = refusal(() => validateChatRequest(body));
    expect([e.status, e.code, e.type, e.param]).toEqual([400, 'invalid_request', 'invalid_request_error', param]);
    expect(e.message).toContain(param.split('.')[0]);
  });

  it('never echoes metadata, which is the client\'s data', () => {
    const e = refusal(() => validateChatRequest({ ...base(), metadata: { 'SECRET-KEY': 'SECRET-VALUE'.repeat(50) } }));
    expect(e.message).not.toMatch(/SECRET/);
  });
});

describe('validateEmbeddingsRequest', () => {
  it.each<[string, Record<string, unknown>]>([
    ['a string', { model: 'emb', input: 'hello' }],
    ['strings', { model: 'emb', input: ['a', 'b'] }],
    ['tokens', { model: 'emb', input: [1, 2, 3] }],
    ['token arrays', { model: 'emb', input: [[1, 2], [3]] }],
    ['with dimensions and unknown fields', { model: 'emb', input: 'x', dimensions: 256, encoding_format: 'float', user: 'u' }],
  ])('accepts %s as the same object', (_name, body) => {
    expect(validateEmbeddingsRequest(body)).toBe(body);
  });

  it.each<[string, unknown, string | null]>([
    ['not an object', 'x', null],
    ['no model', { input: 'x' }, 'model'],
    ['a model name longer than any', { model: 'e'.repeat(257), input: 'x' }, 'model'],
    ['no input', { model: 'emb' }, 'input'],
    ['an empty string', { model: 'emb', input: '' }, 'input'],
    ['an empty array', { model: 'emb', input: [] }, 'input'],
    ['an empty string among strings', { model: 'emb', input: ['a', ''] }, 'input'],
    ['an empty token array', { model: 'emb', input: [[1], []] }, 'input'],
    ['mixed strings and numbers', { model: 'emb', input: ['a', 1] }, 'input'],
    ['fractional tokens', { model: 'emb', input: [1.5] }, 'input'],
    ['an object', { model: 'emb', input: { text: 'x' } }, 'input'],
    ['token arrays with a string', { model: 'emb', input: [[1], ['a']] }, 'input'],
    ['dimensions 0', { model: 'emb', input: 'x', dimensions: 0 }, 'dimensions'],
    ['dimensions fractional', { model: 'emb', input: 'x', dimensions: 2.5 }, 'dimensions'],
    ['an encoding OpenAI does not offer', { model: 'emb', input: 'x', encoding_format: 'int8' }, 'encoding_format'],
    ['more items than OpenAI takes', { model: 'emb', input: Array.from({ length: 2049 }, () => 'a') }, 'input'],
  ])('refuses %s → param %s', (_name, body, param) => {
    const e = refusal(() => validateEmbeddingsRequest(body));
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_request', param]);
  });
});
