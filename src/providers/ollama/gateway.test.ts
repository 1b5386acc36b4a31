/**
 * End to end: the official `openai` client, pointed at a real gateway whose
 * only provider is the loopback Ollama server, gets ordinary OpenAI answers,
 * buffered and streamed, tool calls and embeddings included.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../../test/helpers/gateway.js';
import { startOllamaServer, type OllamaServer } from '../../../test/servers/ollama-server.js';
import { createOllamaAdapter } from './index.js';

const MODEL = 'llama3.2';
let upstream: OllamaServer;
let gateway: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startOllamaServer({ models: [MODEL, 'all-minilm'] });
  gateway = await startGateway(
    {
      providers: [{ id: 'local', type: 'ollama', baseUrl: upstream.url }],
      models: [
        { name: 'chat', deployments: [{ provider: 'local', model: MODEL }] },
        { name: 'embed', deployments: [{ provider: 'local', model: 'all-minilm' }] },
      ],
    },
    { adapters: { ollama: createOllamaAdapter } },
  );
  client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

describe('openai client → gateway → ollama', () => {
  it('buffered completion', async () => {
    upstream.enqueue({ kind: 'message', text: 'Hello there.', promptEvalCount: 9, evalCount: 2 });
    const res = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 });
    expect(res.model).toBe(MODEL);
    expect(res.choices[0]!.message.content).toBe('Hello there.');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
    expect(upstream.requests.at(-1)!.body).toMatchObject({ model: MODEL, stream: false, options: { num_predict: 20 } });
  });

  it('streamed completion with usage', async () => {
    upstream.enqueue({ kind: 'message', text: 'The sky is blue.', promptEvalCount: 7, evalCount: 4 });
    const stream = await client.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'why?' }],
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
    expect(text).toBe('The sky is blue.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
  });

  it('streamed tool call', async () => {
    upstream.enqueue({ kind: 'message', toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Lyon' } }] });
    const runner = client.chat.completions.stream({
      model: 'chat',
      messages: [{ role: 'user', content: 'Weather in Lyon?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
    ]);
  });

  it('embeddings, in the base64 encoding the client asks for by default', async () => {
    upstream.enqueue({ kind: 'embed', vectors: [[0.5, -0.25, 1]], promptEvalCount: 2 });
    const res = await client.embeddings.create({ model: 'embed', input: 'hello' });
    expect(res.data[0]!.embedding).toEqual([0.5, -0.25, 1]);
  });
});
