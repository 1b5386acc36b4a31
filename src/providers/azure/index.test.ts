/**
 * The Azure adapter over a real socket, against the loopback Azure server
 * (whose wire format the `AzureOpenAI` client vouches for): deployment paths,
 * api-version, api-key, Azure's stream preamble, and Azure's error bodies.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, ChatRequest } from '../../protocol/openai.js';
import type { ProviderConfig } from '../../config/types.js';
import type { AttemptContext, ProviderAdapter } from '../types.js';
import { VirtualClock } from '../../../test/helpers/virtual-clock.js';
import { startAzureServer, type AzureServer } from '../../../test/servers/azure-server.js';
import { createAzureAdapter, DEFAULT_AZURE_API_VERSION } from './index.js';

const text = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const deps = { clock: new VirtualClock(), random: () => 0.5 };
const DEPLOYMENT = 'gpt-4o-prod';
let server: AzureServer;
let adapter: ProviderAdapter;
const opened: ProviderAdapter[] = [];

const provider = (extra: Partial<ProviderConfig> = {}): ProviderConfig => ({
  id: 'azure-east',
  type: 'azure',
  baseUrl: server.url,
  apiKey: 'az-secret',
  apiVersion: '2024-10-21',
  locality: 'external',
  headers: {},
  maxConnections: 2,
  ...extra,
});
const make = (extra: Partial<ProviderConfig> = {}): ProviderAdapter => {
  const a = createAzureAdapter(provider(extra), deps);
  opened.push(a);
  return a;
};
const ctx = (model = DEPLOYMENT): AttemptContext => ({ signal: new AbortController().signal, model, requestId: 'req-3' });
const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'alias', messages: [{ role: 'user', content }], ...extra });

beforeAll(async () => {
  server = await startAzureServer({ apiKey: 'az-secret', deployments: [DEPLOYMENT, 'my deployment', 'embed-small'] });
  adapter = make();
});
afterAll(async () => {
  await Promise.all(opened.map((a) => a.close()));
  await server.close();
});

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

describe('azure adapter over a loopback socket', () => {
  it('buffered: deployment path, api-version, api-key header, the upstream body as is', async () => {
    server.enqueue({ kind: 'message', text: 'Seattle.', usage: { prompt_tokens: 24, completion_tokens: 2 } });
    const { response, raw } = await adapter.chat(ask('Biggest city in WA?'), ctx());
    expect(response.choices[0]!.message).toEqual({ content: 'Seattle.', refusal: null, role: 'assistant' });
    expect(response.choices[0]!.finish_reason).toBe('stop');
    expect(response.usage).toEqual({ prompt_tokens: 24, completion_tokens: 2, total_tokens: 26 });
    expect(raw).toBeInstanceOf(Uint8Array);
    const req = server.requests.at(-1)!;
    expect(req.path).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
    expect(req.headers['api-key']).toBe('az-secret');
    expect(req.headers.authorization).toBeUndefined();
    // The client's body with only the model replaced (no `stream` added: false is the default).
    expect(req.body).toEqual({ ...ask('Biggest city in WA?'), model: DEPLOYMENT });
  });

  it('URL-encodes the deployment, defaults api-version, and does not double a /openai base', async () => {
    const noVersion = make({ apiVersion: undefined, baseUrl: `${server.url}/openai/` });
    server.enqueue({ kind: 'message', text: 'ok' });
    await noVersion.chat(ask('hi'), ctx('my deployment'));
    const req = server.requests.at(-1)!;
    expect(req.path).toBe(`/openai/deployments/my%20deployment/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`);
    expect(req.deployment).toBe('my deployment');
  });

  it('streamed: Azure\'s choice-less filter preamble dropped, role chunk first, usage-only chunk last', async () => {
    server.enqueue({ kind: 'raw', body: text('stream-text.sse') });
    const stream = await adapter.chatStream(ask('Biggest city in WA?'), ctx());
    const chunks = await collect(stream);
    expect(server.requests.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(chunks[0]!.choices[0]!.delta).toEqual({ content: '', refusal: null, role: 'assistant' });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null)).toEqual(['', 'Seattle', '.', null, null]);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 2, prompt_tokens: 24, total_tokens: 26 } });
    expect(stream.malformed).toBe(0);
  });

  it('tool call, buffered and streamed: the same tool_calls, finish_reason and usage', async () => {
    const reply = { kind: 'message' as const, toolCalls: [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris"}' }] };
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    server.enqueue(reply);
    const buffered = (await adapter.chat(ask('Weather?', { tools }), ctx())).response;
    expect(buffered.choices[0]!.message.tool_calls).toEqual([{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(buffered.choices[0]!.finish_reason).toBe('tool_calls');

    server.enqueue(reply);
    const chunks = await collect(await adapter.chatStream(ask('Weather?', { tools }), ctx()));
    let args = '';
    let id: string | undefined;
    for (const c of chunks) {
      const t = c.choices[0]?.delta.tool_calls?.[0];
      id ??= t?.id;
      args += t?.function?.arguments ?? '';
    }
    expect({ id, args }).toEqual({ id: 'call_9', args: '{"city":"Paris"}' });
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)!.usage).toEqual(buffered.usage);
  });

  it('classifies Azure error bodies with the generic classifier', async () => {
    const cases: [number, string, Record<string, string>, object][] = [
      [400, 'error-400-content-filter.json', {}, { category: 'content_policy', providerCode: 'content_filter' }],
      [400, 'error-400-context.json', {}, { category: 'context_length' }],
      [429, 'error-429.json', { 'retry-after': '6' }, { category: 'rate_limited', retryAfterMs: 6000 }],
      [401, 'error-401.json', {}, { category: 'auth' }],
      [404, 'error-404-deployment.json', {}, { category: 'not_found', providerCode: 'DeploymentNotFound' }],
    ];
    for (const [status, file, headers, expected] of cases) {
      server.enqueue({ kind: 'error', status, body: JSON.parse(text(file)), headers });
      const err = await adapter.chat(ask('hi'), ctx()).catch((e: unknown) => e);
      expect(err, file).toMatchObject({ status, ...expected });
      expect((err as Error).message).not.toContain('az-secret');
    }
  });

  it('a stream cut before its finish fails with a network error', async () => {
    server.enqueue({ kind: 'message', text: 'one two three', cutAfter: 3 });
    const stream = await adapter.chatStream(ask('count'), ctx());
    const err = await collect(stream).catch((e: unknown) => e);
    expect(err).toMatchObject({ category: 'network' });
  });

  it('embeddings go to the embedding deployment', async () => {
    server.enqueue({ kind: 'embed', vectors: [[0.5, 0.25]], promptTokens: 3 });
    const { response } = await adapter.embeddings!({ model: 'e', input: 'hello' }, ctx('embed-small'));
    expect(response.data[0]!.embedding).toEqual([0.5, 0.25]);
    expect(server.requests.at(-1)!.path).toBe('/openai/deployments/embed-small/embeddings?api-version=2024-10-21');
  });
});
