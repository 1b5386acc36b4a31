import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { guessMime, SKIP_THOUGHT_SIGNATURE, toGenerateContentRequest } from './convert-request.js';
import type { GenerateContentRequest } from './wire.js';

interface Pair {
  openai: ChatRequest;
  gemini: GenerateContentRequest;
}
const fixture = (name: string): Pair => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as Pair;

const user = (content: string): ChatRequest['messages'][number] => ({ role: 'user', content });
const req = (extra: Partial<ChatRequest>): ChatRequest => ({ model: 'm', messages: [user('hi')], ...extra });

function invalid(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).category).toBe('invalid_request');
    return err as UpstreamError;
  }
  throw new Error('expected an invalid_request UpstreamError');
}

describe('toGenerateContentRequest (fixtures in Gemini wire format)', () => {
  for (const name of [
    'request-text.json',
    'request-system.json',
    'request-multi-turn.json',
    'request-image.json',
    'request-tools.json',
    'request-json-schema.json',
  ]) {
    it(name, () => {
      const { openai, gemini } = fixture(name);
      expect(toGenerateContentRequest(openai)).toEqual(gemini);
    });
  }
});

describe('toGenerateContentRequest details', () => {
  it('maps every tool_choice form to functionCallingConfig', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } } }];
    const mode = (tool_choice: ChatRequest['tool_choice']) => toGenerateContentRequest(req({ tools, tool_choice })).toolConfig;
    expect(mode(undefined)).toBeUndefined();
    expect(mode('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(mode('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(mode('required')).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(mode({ type: 'function', function: { name: 'f' } })).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } });
    // No tools: no toolConfig either; a call required of no tools is refused.
    expect(toGenerateContentRequest(req({ tool_choice: 'auto' })).toolConfig).toBeUndefined();
    expect(() => toGenerateContentRequest(req({ tool_choice: 'required' }))).toThrow(expect.objectContaining({ param: 'tool_choice', unsent: true }));
  });

  it('omits generationConfig when nothing is set and skips empty messages', () => {
    const out = toGenerateContentRequest(req({ messages: [user('a'), { role: 'assistant', content: '' }, user('b')] }));
    expect(out).toEqual({ contents: [{ role: 'user', parts: [{ text: 'a' }, { text: 'b' }] }] });
  });

  it('sends a system-only request as the user turn (Gemini needs one)', () => {
    const out = toGenerateContentRequest(req({ messages: [{ role: 'system', content: 'Say hi' }] }));
    expect(out).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Say hi' }] }] });
  });

  it('base64-encodes a data URL that is not base64 already', () => {
    const out = toGenerateContentRequest(
      req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/svg+xml,%3Csvg%2F%3E' } }] }] }),
    );
    expect(out.contents[0]!.parts[0]).toEqual({ inlineData: { mimeType: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') } });
    // Bytes that are not UTF-8, an invalid escape (it used to throw a URIError), a flag in upper case (it used to be encoded twice).
    const part = (url: string) => toGenerateContentRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] })).contents[0]!.parts[0];
    expect(part('data:image/png,%89P%FF')).toEqual({ inlineData: { mimeType: 'image/png', data: Buffer.from([0x89, 0x50, 0xff]).toString('base64') } });
    expect(part('data:text/plain,%E0%A4%A')).toEqual({ inlineData: { mimeType: 'text/plain', data: Buffer.from([0xe0, 0xa4, 0x25, 0x41]).toString('base64') } });
    expect(part('data:image/png;BASE64,iVBORw0KGgo=')).toEqual({ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } });
  });

  it('maps input_audio and inline files to inlineData', () => {
    const out = toGenerateContentRequest(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'mp3' } },
              { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            ],
          },
        ],
      }),
    );
    expect(out.contents[0]!.parts).toEqual([
      { inlineData: { mimeType: 'audio/mp3', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('adds the documented skip signature to a function-call turn that has none (history from another provider)', () => {
    const out = toGenerateContentRequest(
      req({
        messages: [
          user('x'),
          { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '' } }] },
          { role: 'tool', tool_call_id: 'toolu_1', content: 'done' },
        ],
      }),
    );
    expect(out.contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: SKIP_THOUGHT_SIGNATURE }] });
    expect(out.contents[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'f', response: { content: 'done' } } }] });
  });

  it('puts tool results in the order of the calls they answer: Gemini pairs them by position (found by fuzzing)', () => {
    const call = (id: string, city: string) => ({ id, type: 'function' as const, function: { name: 'get_weather', arguments: JSON.stringify({ city }) } });
    const out = toGenerateContentRequest(
      req({
        messages: [
          user('weather in Paris and London?'),
          { role: 'assistant', content: null, tool_calls: [call('c1', 'Paris'), call('c2', 'London')] },
          { role: 'tool', tool_call_id: 'c2', content: 'London: 10C' },
          { role: 'tool', tool_call_id: 'c1', content: 'Paris: 20C' },
          user('thanks'),
        ],
      }),
    );
    expect(out.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { content: 'Paris: 20C' } } },
        { functionResponse: { name: 'get_weather', response: { content: 'London: 10C' } } },
        { text: 'thanks' },
      ],
    });
  });

  it('refuses what Gemini cannot express, naming the offending field', () => {
    expect(invalid(() => toGenerateContentRequest(req({ messages: [user('x'), { role: 'tool', tool_call_id: 'nope', content: '1' }] }))).param).toBe(
      'messages[1].tool_call_id',
    );
    expect(
      invalid(() => toGenerateContentRequest(req({ messages: [{ role: 'user', content: [{ type: 'video_url', video_url: {} }] }] }))).param,
    ).toBe('messages[0].content[0]');
    expect(
      invalid(() => toGenerateContentRequest(req({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] })))
        .message,
    ).toContain('data: or http(s)');
    invalid(() => toGenerateContentRequest(req({ tools: [{ type: 'custom' } as never] })));
  });

  it('guesses image mime types from the URL path only', () => {
    expect(guessMime('https://x.test/a/b.PNG', 'image/jpeg')).toBe('image/png');
    expect(guessMime('https://x.test/a.gif?x=y.png', 'image/jpeg')).toBe('image/gif');
    // Names an object has by inheritance are no extensions (found by review: Object was sent as the mimeType).
    for (const ext of ['constructor', '__proto__', 'toString']) expect(guessMime(`https://x.test/a.${ext}`, 'image/jpeg')).toBe('image/jpeg');
    expect(guessMime('https://x.test/v1.2/photo', 'image/jpeg')).toBe('image/jpeg');
    expect(guessMime('https://x.test/doc.pdf#p=2', 'image/jpeg')).toBe('application/pdf');
  });
});
