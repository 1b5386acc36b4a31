/**
 * CONTRACT: "In the response (and in every stream chunk) `model` names the
 * concrete upstream model that served". Every provider type, over real sockets
 * to its loopback wire server: the buffered answer and every chunk of a stream
 * (its usage chunk too) carry the upstream's model, never the alias asked for
 * (found unpinned by the contract audit: only resumed streams were checked).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startAnthropicServer } from '../servers/anthropic-server.js';
import { startAzureServer } from '../servers/azure-server.js';
import { startCohereServer } from '../servers/cohere-server.js';
import { startGeminiServer } from '../servers/gemini-server.js';
import { startOllamaServer } from '../servers/ollama-server.js';

let gw: TestGateway;
const closers: (() => Promise<void>)[] = [];

/** alias → the model the client must read: the deployment's, or what Azure reports for its deployment. */
const SERVED: Record<string, string> = {
  anthropic: 'anthropic-model',
  gemini: 'gemini-model',
  cohere: 'cohere-model',
  ollama: 'ollama-model',
  azure: 'gpt-azure-underlying',
  simulated: 'simulated-model',
};

beforeAll(async () => {
  const servers = {
    anthropic: await startAnthropicServer(),
    gemini: await startGeminiServer(),
    cohere: await startCohereServer(),
    ollama: await startOllamaServer(),
    azure: await startAzureServer({ model: SERVED.azure }),
  };
  for (const s of Object.values(servers)) closers.push(() => s.close());
  const upstream = Object.entries(servers).map(([type, s]) => ({
    id: type,
    type: type as keyof typeof servers,
    baseUrl: s.url,
    ...(type === 'ollama' ? {} : { apiKey: '${UP_KEY}' }),
  }));
  gw = await startGateway(
    {
      providers: [...upstream, { id: 'simulated', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0 } }],
      models: Object.keys(SERVED).map((p) => ({ name: p, deployments: [{ provider: p, model: `${p}-model` }] })),
    },
    { env: { UP_KEY: 'k' } },
  );
});

afterAll(async () => {
  await gw.close(0);
  for (const c of closers) await c();
});

const ask = (model: string, stream: boolean) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream, stream_options: { include_usage: true } } : {}) }),
  });

describe('`model` in an answer names the upstream model that served', () => {
  for (const [alias, served] of Object.entries(SERVED)) {
    it(`${alias}: buffered, and every chunk of a stream with its usage chunk`, async () => {
      const buffered = await ask(alias, false);
      expect(buffered.status).toBe(200);
      expect(((await buffered.json()) as { model: unknown }).model).toBe(served);

      const streamed = await ask(alias, true);
      expect(streamed.status).toBe(200);
      const chunks = (await streamed.text())
        .split('\n')
        .filter((l) => l.startsWith('data: {'))
        .map((l) => JSON.parse(l.slice(6)) as { model: unknown; usage?: unknown });
      expect(chunks.length).toBeGreaterThan(2);
      expect(chunks.at(-1)!.usage).toBeTruthy();
      expect(chunks.map((c) => c.model)).toEqual(chunks.map(() => served));
    });
  }
});
