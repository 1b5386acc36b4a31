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
    ['a tool of an unknown type', { ...base(), tools: [{ type: 'code_interpreter', function: { name: 'f' } }] }, 'tools[0]'],
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
