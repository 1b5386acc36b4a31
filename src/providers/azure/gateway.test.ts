/**
 * End to end: the official `openai` client, pointed at a real gateway whose
 * only provider is the loopback Azure OpenAI server, gets ordinary OpenAI
 * answers, buffered and streamed, tool calls included.
 */
import { describe, expect, it } from 'vitest';
import { expectStreamedLyonCall, streamWithUsage } from '../../../test/helpers/client-turns.js';
import { openaiThroughGateway } from '../../../test/helpers/openai-through-gateway.js';
import { startAzureServer } from '../../../test/servers/azure-server.js';
import { createAzureAdapter } from './index.js';

const DEPLOYMENT = 'gpt-4o-prod';
const t = openaiThroughGateway({
  upstream: () => startAzureServer({ apiKey: 'az-secret', deployments: [DEPLOYMENT] }),
  config: (url) => ({
    providers: [{ id: 'azure-east', type: 'azure', baseUrl: url, apiKey: '${AZURE_OPENAI_API_KEY}', apiVersion: '2024-10-21' }],
    models: [{ name: 'chat', deployments: [{ provider: 'azure-east', model: DEPLOYMENT }] }],
  }),
  options: { env: { AZURE_OPENAI_API_KEY: 'az-secret' }, adapters: { azure: createAzureAdapter } },
});

describe('openai client → gateway → azure openai', () => {
  it('buffered completion', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'Seattle.', usage: { prompt_tokens: 14, completion_tokens: 2 } });
    const res = await t.client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Biggest city in WA?' }] });
    expect(res.choices[0]!.message.content).toBe('Seattle.');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 2, total_tokens: 16 });
    expect(t.upstream.requests.at(-1)!.path).toBe(`/openai/deployments/${DEPLOYMENT}/chat/completions?api-version=2024-10-21`);
  });

  it('streamed completion with usage', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'It is Seattle.' });
    const { out, chunks } = await streamWithUsage(t.client, 'Biggest city in WA?');
    // Azure's choice-less content-filter preamble never reaches the client.
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(out.content).toBe('It is Seattle.');
    expect(out.usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 3 });
  });

  it('streamed tool call', async () => {
    t.upstream.enqueue({ kind: 'message', toolCalls: [{ id: 'call_5', name: 'get_weather', arguments: '{"city":"Lyon"}' }] });
    await expectStreamedLyonCall(t.client, 'call_5');
  });
});
