/**
 * Embeddings sent to a chat model behind Gemini or Ollama (an embeddings alias whose first
 * deployment is a chat model, or `auto`'s chat tiers) are refused as each upstream refuses
 * them: Gemini with 404 NOT_FOUND "… is not supported for batchEmbedContents", Ollama with
 * "this model does not support embeddings" (a 500: its runner's error). That refusal is this request's:
 * the next candidate embeds, nothing is retried, and the chat deployment is neither cooled
 * down nor its breaker opened, so its chat traffic goes on at once. Real loopback servers in
 * each provider's wire format; the official SDK as the client.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { googleError, startGeminiServer, type GeminiServer } from '../servers/gemini-server.js';
import { startOllamaServer, type OllamaServer } from '../servers/ollama-server.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** An OpenAI-format embeddings upstream: one vector per input. */
async function embedder(): Promise<RawUpstream> {
  const up = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', model: 'text-embedding-3-small', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 1, total_tokens: 1 } }));
  });
  closers.push(() => up.close());
  return up;
}

async function gatewayOver(provider: Record<string, unknown>, chatModel: string, embedUrl: string): Promise<TestGateway> {
  const gw = await startGateway(
    {
      // Retries, and a breaker that one failure opens: a refusal read as a fault would show.
      resilience: { maxRetries: 2, cooldownMs: 600_000, breaker: { failureThreshold: 1 } },
      providers: [provider, { id: 'emb', type: 'openai', baseUrl: embedUrl }],
      models: [
        { name: 'mixed', deployments: [{ provider: provider.id, model: chatModel }], fallbacks: ['vectors'] },
        { name: 'vectors', deployments: [{ provider: 'emb', model: 'text-embedding-3-small' }] },
      ],
    },
    { env: { K: 'test-key-0123456789' } },
  );
  closers.push(() => gw.close(0));
  return gw;
}

async function embedsThenChats(gw: TestGateway, chatKey: string) {
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
  const e = await client.embeddings.create({ model: 'mixed', input: 'hello', encoding_format: 'float' }).withResponse();
  expect(e.data.data[0]!.embedding).toEqual([0.1, 0.2]);
  expect(e.response.headers.get('x-switchyard-deployment')).toBe('emb/text-embedding-3-small');
  expect(e.response.headers.get('x-switchyard-attempts')).toBe('2');
  expect(gw.gateway.health.state(chatKey)).toBe('closed');
  const chat = await client.chat.completions.create({ model: 'mixed', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  expect(chat.response.headers.get('x-switchyard-deployment')).toBe(chatKey);
  expect(chat.response.headers.get('x-switchyard-attempts')).toBe('1');
  return chat.data.choices[0]!.message.content;
}

describe('a chat model refusing to embed', () => {
  it('gemini: 404 "not supported for batchEmbedContents" passes the request on, and the chat model still chats', async () => {
    const gemini: GeminiServer = await startGeminiServer({ apiKey: 'test-key-0123456789' });
    closers.push(() => gemini.close());
    const gw = await gatewayOver({ id: 'ge', type: 'gemini', baseUrl: gemini.url, apiKey: '${K}' }, 'gemini-2.5-flash', (await embedder()).url);
    gemini.enqueue(
      {
        kind: 'error',
        status: 404,
        body: googleError(404, 'models/gemini-2.5-flash is not found for API version v1beta, or is not supported for batchEmbedContents. Call ListModels to see the list of available models and their supported methods.'),
      },
      { kind: 'text', text: 'hello there' },
    );
    expect(await embedsThenChats(gw, 'ge/gemini-2.5-flash')).toBe('hello there');
    expect(gemini.requests).toHaveLength(2);
  });

  it('ollama: "this model does not support embeddings" passes the request on, and the chat model still chats', async () => {
    const ollama: OllamaServer = await startOllamaServer();
    closers.push(() => ollama.close());
    const gw = await gatewayOver({ id: 'ol', type: 'ollama', baseUrl: ollama.url }, 'llama3.2', (await embedder()).url);
    ollama.enqueue({ kind: 'error', status: 500, error: 'this model does not support embeddings' }, { kind: 'message', text: 'hello there' });
    expect(await embedsThenChats(gw, 'ol/llama3.2')).toBe('hello there');
    expect(ollama.requests).toHaveLength(2);
  });
});
