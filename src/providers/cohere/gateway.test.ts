/**
 * End to end: the official `openai` client, pointed at a real gateway whose
 * only provider is the loopback Cohere server, gets ordinary OpenAI answers,
 * buffered and streamed, tool calls included.
 */
import { describe, expect, it } from 'vitest';
import { assembleStream } from '../../../test/helpers/assemble-stream.js';
import { openaiThroughGateway } from '../../../test/helpers/openai-through-gateway.js';
import { startCohereServer } from '../../../test/servers/cohere-server.js';
import { createCohereAdapter } from './index.js';

const MODEL = 'command-r-plus-08-2024';
const REASONING = 'command-a-reasoning-08-2025';
const t = openaiThroughGateway({
  upstream: () => startCohereServer({ apiKey: 'co-key' }),
  config: (url) => ({
    providers: [{ id: 'co', type: 'cohere', baseUrl: url, apiKey: '${COHERE_API_KEY}' }],
    models: [
      { name: 'chat', deployments: [{ provider: 'co', model: MODEL }] },
      { name: 'reasoning', deployments: [{ provider: 'co', model: REASONING }] },
    ],
  }),
  options: { env: { COHERE_API_KEY: 'co-key' }, adapters: { cohere: createCohereAdapter } },
});

describe('openai client → gateway → cohere', () => {
  it('buffered completion', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'Bonjour!' });
    const res = await t.client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Say hi in French' }] });
    expect(res.model).toBe(MODEL);
    expect(res.choices[0]!.message.content).toBe('Bonjour!');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 });
    expect(t.upstream.requests.at(-1)!.body).toMatchObject({ model: MODEL, messages: [{ role: 'user', content: 'Say hi in French' }] });
  });

  it('streamed completion with usage', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'Bonjour tout le monde!' });
    const stream = await t.client.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'Say hi to everyone in French' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { out, chunks } = await assembleStream(stream);
    for (const chunk of chunks) expect(chunk.model).toBe(MODEL);
    expect(out.content).toBe('Bonjour tout le monde!');
    expect(out.finish_reason).toBe('stop');
    expect(out.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4 });
  });

  it('streamed tool call', async () => {
    t.upstream.enqueue({ kind: 'message', toolPlan: 'Look it up.', toolCalls: [{ id: 'get_weather_1', name: 'get_weather', arguments: '{"city":"Lyon"}' }] });
    const runner = t.client.chat.completions.stream({
      model: 'chat',
      messages: [{ role: 'user', content: 'Weather in Lyon?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
    ]);
  });

  it('reasoning_effort reaches a reasoning model as thinking, whose content comes back as reasoning_content, buffered and streamed', async () => {
    const reply = { kind: 'message' as const, thinking: 'Lyon is in France.', text: 'Sunny.' };
    t.upstream.enqueue(reply, reply);
    const params = { model: 'reasoning', messages: [{ role: 'user' as const, content: 'Weather in Lyon?' }], reasoning_effort: 'medium' as const };
    const res = await t.client.chat.completions.create(params);
    expect(res.choices[0]!.message.content).toBe('Sunny.');
    expect((res.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe('Lyon is in France.');
    const stream = await t.client.chat.completions.create({ ...params, stream: true });
    const { out, chunks } = await assembleStream(stream);
    expect(out.content).toBe('Sunny.');
    expect(chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '').join('')).toBe('Lyon is in France.');
    for (const rec of t.upstream.requests.slice(-2)) expect(rec.body).toMatchObject({ thinking: { type: 'enabled', token_budget: 8192 } });
  });

  it('reasoning_effort to a model that does not reason is not sent (the server refuses thinking there)', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'Hi.' });
    const res = await t.client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' });
    expect(res.choices[0]!.message.content).toBe('Hi.');
    expect(t.upstream.requests.at(-1)!.body).not.toHaveProperty('thinking');
  });
});

