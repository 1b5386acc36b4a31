/**
 * End to end: the official `openai` client, pointed at a real gateway whose
 * only provider is the loopback Cohere server, gets ordinary OpenAI answers,
 * buffered and streamed, tool calls included.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../../test/helpers/gateway.js';
import { startCohereServer, type CohereServer } from '../../../test/servers/cohere-server.js';
import { createCohereAdapter } from './index.js';

const MODEL = 'command-r-plus-08-2024';
let upstream: CohereServer;
let gateway: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startCohereServer({ apiKey: 'co-key' });
  gateway = await startGateway(
    {
      providers: [{ id: 'co', type: 'cohere', baseUrl: upstream.url, apiKey: '${COHERE_API_KEY}' }],
      models: [{ name: 'chat', deployments: [{ provider: 'co', model: MODEL }] }],
    },
    { env: { COHERE_API_KEY: 'co-key' }, adapters: { cohere: createCohereAdapter } },
  );
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

describe('openai client → gateway → cohere', () => {
  it('buffered completion', async () => {
    upstream.enqueue({ kind: 'message', text: 'Bonjour!' });
    const res = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Say hi in French' }] });
    expect(res.model).toBe(MODEL);
    expect(res.choices[0]!.message.content).toBe('Bonjour!');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 });
    expect(upstream.requests.at(-1)!.body).toMatchObject({ model: MODEL, messages: [{ role: 'user', content: 'Say hi in French' }] });
  });

  it('streamed completion with usage', async () => {
    upstream.enqueue({ kind: 'message', text: 'Bonjour tout le monde!' });
    const stream = await client.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'Say hi to everyone in French' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.model).toBe(MODEL);
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Bonjour tout le monde!');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4 });
  });

  it('streamed tool call', async () => {
    upstream.enqueue({ kind: 'message', toolPlan: 'Look it up.', toolCalls: [{ id: 'get_weather_1', name: 'get_weather', arguments: '{"city":"Lyon"}' }] });
    const runner = client.chat.completions.stream({
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
});
