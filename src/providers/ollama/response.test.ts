import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { fromOllamaResponse, mapOllamaDoneReason } from './response.js';
import { toolCallChoice } from '../../../test/helpers/tool-call-choice.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
const CREATED = 1_767_225_600;
let n = 0;
const newId = () => `call_gen${++n}`;

describe('Ollama /api/chat answer → OpenAI chat completion', () => {
  it('converts a text answer with eval counts as usage', () => {
    expect(fromOllamaResponse(fixture('chat-text.json'), 'llama3.2', CREATED, 'chatcmpl-r1', newId)).toEqual({
      id: 'chatcmpl-r1',
      object: 'chat.completion',
      created: CREATED,
      model: 'llama3.2',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How are you today?', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 26, completion_tokens: 298, total_tokens: 324 },
      system_fingerprint: null,
    });
  });

  it('converts tool calls: object arguments to JSON text, ids minted, finish_reason tool_calls despite done_reason stop', () => {
    n = 0;
    const out = fromOllamaResponse(fixture('chat-tool-call.json'), 'llama3.2', CREATED, 'chatcmpl-r2', newId);
    expect(out.choices[0]).toEqual(toolCallChoice([{ id: 'call_gen1', name: 'get_current_weather', arguments: '{"format":"celsius","location":"Paris, FR"}' }]));
    expect(out.usage).toEqual({ prompt_tokens: 122, completion_tokens: 33, total_tokens: 155 });
  });

  it('keeps a tool-call id the server sent', () => {
    const out = fromOllamaResponse(
      { message: { role: 'assistant', content: '', tool_calls: [{ id: 'call_srv', function: { index: 0, name: 'f', arguments: {} } }] }, done: true },
      'm',
      CREATED,
      'x',
      newId,
    );
    expect(out.choices[0]!.message.tool_calls![0]!.id).toBe('call_srv');
  });

  it('maps done_reason length to length, everything else to stop', () => {
    expect(['stop', 'length', 'load', undefined].map(mapOllamaDoneReason)).toEqual(['stop', 'length', 'stop', 'stop']);
  });

  it('counts a fully cached prompt (no prompt_eval_count) as zero prompt tokens', () => {
    const out = fromOllamaResponse({ message: { role: 'assistant', content: 'ok' }, done: true, eval_count: 2 }, 'm', CREATED, 'x', newId);
    expect(out.usage).toEqual({ prompt_tokens: 0, completion_tokens: 2, total_tokens: 2 });
  });

  it('treats a body without a message as the upstream failing', () => {
    expect(() => fromOllamaResponse({ done: true }, 'm', CREATED, 'x', newId)).toThrow(UpstreamError);
  });
});
