/**
 * End to end: the official `openai` client, pointed at a real gateway whose
 * only provider is the loopback Azure OpenAI server, gets ordinary OpenAI
 * answers, buffered and streamed, tool calls included.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../../test/helpers/gateway.js';
import { startAzureServer, type AzureServer } from '../../../test/servers/azure-server.js';
import { createAzureAdapter } from './index.js';

const DEPLOYMENT = 'gpt-4o-prod';
let upstream: AzureServer;
let gateway: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startAzureServer({ apiKey: 'az-secret', deployments: [DEPLOYMENT] });
  gateway = await startGateway(
    {
      providers: [{ id: 'azure-east', type: 'azure', baseUrl: upstream.url, apiKey: '${AZURE_OPENAI_API_KEY}', apiVersion: '2024-10-21' }],
      models: [{ name: 'chat', deployments: [{ provider: 'azure-east', model: DEPLOYMENT }] }],
    },
    { env: { AZURE_OPENAI_API_KEY: 'az-secret' }, adapters: { azure: createAzureAdapter } },
  );
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

describe('openai client → gateway → azure openai', () => {
  it('buffered completion', async () => {
    upstream.enqueue({ kind: 'message', text: 'Seattle.', usage: { prompt_tokens: 14, completion_tokens: 2 } });
    const res = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Biggest city in WA?' }] });
    expect(res.choices[0]!.message.content).toBe('Seattle.');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 2, total_tokens: 16 });
    expect(upstream.requests.at(-1)!.path).toBe(`/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=2024-10-21`);
  });

  it('streamed completion with usage', async () => {
    upstream.enqueue({ kind: 'message', text: 'It is Seattle.' });
    const stream = await client.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'Biggest city in WA?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let first: OpenAI.ChatCompletionChunk | undefined;
    for await (const chunk of stream) {
      first ??= chunk;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    // Azure's choice-less content-filter preamble never reaches the client.
    expect(first!.choices[0]!.delta.role).toBe('assistant');
    expect(text).toBe('It is Seattle.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 3 });
  });

  it('streamed tool call', async () => {
    upstream.enqueue({ kind: 'message', toolCalls: [{ id: 'call_5', name: 'get_weather', arguments: '{"city":"Lyon"}' }] });
    const runner = client.chat.completions.stream({
      model: 'chat',
      messages: [{ role: 'user', content: 'Weather in Lyon?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_5', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
    ]);
  });
});
