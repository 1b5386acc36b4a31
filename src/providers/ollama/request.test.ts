import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { toOllamaRequest } from './request.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_current_weather',
    description: 'Get the current weather for a location',
    parameters: {
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The location to get the weather for, e.g. San Francisco, CA' },
        format: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['location', 'format'],
    },
  },
};

function thrown(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (e) {
    if (e instanceof UpstreamError) return e;
    throw e;
  }
  throw new Error('expected a throw');
}

describe('OpenAI request → Ollama /api/chat body', () => {
  it('converts system, multi-turn, tool calls (object arguments), tool results (named), images and options', () => {
    const req: ChatRequest = {
      model: 'vision',
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        { role: 'user', content: 'What is the weather today in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_abc123', type: 'function', function: { name: 'get_current_weather', arguments: '{"format":"celsius","location":"Paris, FR"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_abc123', content: '{"temperature":22}' },
        { role: 'assistant', content: 'It is 22 degrees in Paris.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in this image?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAG0AAABmCAYAAADBPx+V' } },
          ],
        },
      ],
      tools: [weatherTool],
      tool_choice: 'auto',
      temperature: 0,
      top_p: 0.9,
      max_tokens: 100,
      stop: ['\n', 'user:'],
      seed: 101,
    };
    expect(toOllamaRequest(req, 'llava', false)).toEqual(fixture('request-multi-turn-tools.json'));
  });

  it('sends no options object when nothing is set, and stream as asked', () => {
    expect(toOllamaRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }, 'llama3.2', true)).toEqual({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
  });

  it('maps response_format: json_object → "json", json_schema → the schema', () => {
    const base: ChatRequest = { model: 'x', messages: [{ role: 'user', content: 'json' }] };
    expect(toOllamaRequest({ ...base, response_format: { type: 'json_object' } }, 'm', false).format).toBe('json');
    const schema = { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] };
    expect(toOllamaRequest({ ...base, response_format: { type: 'json_schema', json_schema: { name: 'p', schema } } }, 'm', false).format).toEqual(schema);
    expect(toOllamaRequest({ ...base, response_format: { type: 'text' } }, 'm', false).format).toBeUndefined();
  });

  it('honours tool_choice none by offering no tools, and a named tool by offering only it', () => {
    const other = { type: 'function' as const, function: { name: 'get_time' } };
    const base: ChatRequest = { model: 'x', messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool, other] };
    expect(toOllamaRequest({ ...base, tool_choice: 'none' }, 'm', false).tools).toBeUndefined();
    expect(toOllamaRequest({ ...base, tool_choice: { type: 'function', function: { name: 'get_time' } } }, 'm', false).tools).toEqual([
      // A tool without parameters takes none: an empty object schema, as Ollama's own tools declare it.
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(thrown(() => toOllamaRequest({ ...base, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'm', false)).category).toBe(
      'invalid_request',
    );
  });

  it('refuses image URLs with a clear invalid_request: Ollama takes bytes, not links', () => {
    const err = thrown(() =>
      toOllamaRequest(
        { model: 'x', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] },
        'llava',
        false,
      ),
    );
    expect(err.category).toBe('invalid_request');
    expect(err.message).toMatch(/base64 data URL/);
    const malformed = thrown(() =>
      toOllamaRequest({ model: 'x', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64' } }] }] }, 'm', false),
    );
    expect(malformed.category).toBe('invalid_request');
  });

  it('takes any data URL as bytes: the base64 flag in any case, or percent-encoded bytes', () => {
    const images = (url: string) =>
      toOllamaRequest({ model: 'x', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] }, 'm', false).messages[0]!.images;
    expect(images('data:image/png;BASE64,iVBORw0KGgo=')).toEqual(['iVBORw0KGgo=']);
    expect(images('data:image/png,%89PNG%0D%0A')).toEqual([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]).toString('base64')]);
  });

  it('refuses tool-call arguments that are not a JSON object', () => {
    const req = (args: string): ChatRequest => ({
      model: 'x',
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }],
    });
    expect(thrown(() => toOllamaRequest(req('{oops'), 'm', false)).category).toBe('invalid_request');
    expect(thrown(() => toOllamaRequest(req('[1]'), 'm', false)).category).toBe('invalid_request');
    expect(toOllamaRequest(req(''), 'm', false).messages[0]!.tool_calls![0]!.function.arguments).toEqual({});
  });
});
