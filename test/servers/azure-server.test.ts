/**
 * The loopback Azure OpenAI server is only useful if it is faithful: the
 * `openai` package's `AzureOpenAI` client must read what it writes exactly as
 * it reads a real `*.openai.azure.com` resource.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AzureOpenAI, APIError } from 'openai';
import { startAzureServer, type AzureServer } from './azure-server.js';

const API_VERSION = '2024-10-21';
let server: AzureServer;
let client: AzureOpenAI;

beforeAll(async () => {
  server = await startAzureServer({ apiKey: 'az-key', deployments: ['gpt-4o-prod', 'embed-small'] });
  client = new AzureOpenAI({ endpoint: server.url, apiKey: 'az-key', apiVersion: API_VERSION, deployment: 'gpt-4o-prod', maxRetries: 0 });
});
afterAll(() => server.close());

describe('azure loopback server, read by the official AzureOpenAI client', () => {
  it('answers a buffered chat at the deployment path', async () => {
    server.enqueue({ kind: 'message', text: 'Seattle.', usage: { prompt_tokens: 20, completion_tokens: 2 } });
    const res = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Biggest city in WA?' }] });
    expect(res.choices[0]!.message.content).toBe('Seattle.');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toEqual({ prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 });
    expect(res.model).toBe('gpt-4o-2024-11-20');
    const req = server.requests.at(-1)!;
    expect(req.deployment).toBe('gpt-4o-prod');
    expect(req.apiVersion).toBe(API_VERSION);
    expect(req.path).toBe(`/openai/deployments/gpt-4o-prod/chat/completions?api-version=${API_VERSION}`);
    expect(req.headers['api-key']).toBe('az-key');
  });

  it('streams chunks the client iterates, filter preamble and usage included', async () => {
    server.enqueue({ kind: 'message', text: 'It is Seattle.' });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Biggest city in WA?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: unknown;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('It is Seattle.');
    expect(finish).toBe('stop');
    expect(usage).toEqual({ completion_tokens: 3, prompt_tokens: 19, total_tokens: 22 });
    expect(chunks).toBe(1 + 1 + 3 + 1 + 1); // filter preamble, role, 3 words, finish, usage
  });

  it('streams a tool call the client reassembles', async () => {
    server.enqueue({ kind: 'message', toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
      stream: true,
    });
    let args = '';
    let name: string | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta.tool_calls?.[0];
      if (call?.function?.name) name = call.function.name;
      args += call?.function?.arguments ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect({ name, args, finish }).toEqual({ name: 'get_weather', args: '{"city":"Paris"}', finish: 'tool_calls' });
  });

  it('embeds, in the base64 encoding the client asks for by default', async () => {
    const embedder = new AzureOpenAI({ endpoint: server.url, apiKey: 'az-key', apiVersion: API_VERSION, deployment: 'embed-small', maxRetries: 0 });
    server.enqueue({ kind: 'embed', vectors: [[0.5, -1, 2]] });
    const res = await embedder.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
    expect(res.data[0]!.embedding).toEqual([0.5, -1, 2]);
    expect(server.requests.at(-1)!.deployment).toBe('embed-small');
  });

  it('answers a scripted 429 with Retry-After the client surfaces', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      headers: { 'retry-after': '6' },
      body: { error: { code: '429', message: 'Requests to the ChatCompletions_Create Operation have exceeded token rate limit. Please retry after 6 seconds.' } },
    });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(429);
    expect((err as APIError).headers?.get('retry-after')).toBe('6');
  });

  it('refuses a wrong key and an unknown deployment the way Azure does', async () => {
    const wrongKey = new AzureOpenAI({ endpoint: server.url, apiKey: 'nope', apiVersion: API_VERSION, deployment: 'gpt-4o-prod', maxRetries: 0 });
    const e401 = await wrongKey.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((e401 as APIError).status).toBe(401);
    const wrongDeployment = new AzureOpenAI({ endpoint: server.url, apiKey: 'az-key', apiVersion: API_VERSION, deployment: 'missing', maxRetries: 0 });
    const e404 = await wrongDeployment.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((e404 as APIError).status).toBe(404);
    expect((e404 as APIError).code).toBe('DeploymentNotFound');
  });

  it('cuts a stream after N events: the client sees a truncated stream', async () => {
    server.enqueue({ kind: 'message', text: 'one two three', cutAfter: 3 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(text).toBe('one ');
    expect(err).toBeInstanceOf(Error);
  });
});
