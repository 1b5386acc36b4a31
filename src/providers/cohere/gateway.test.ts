/**
 * End to end: the official `openai` client, pointed at a real gateway whose
 * only provider is the loopback Cohere server, gets ordinary OpenAI answers,
 * buffered and streamed, tool calls included.
 */
import { describe, expect, it } from 'vitest';
import { expectReasoningBothWays, expectStreamedLyonCall, streamWithUsage } from '../../../test/helpers/client-turns.js';
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
    const { out, chunks } = await streamWithUsage(t.client, 'Say hi to everyone in French');
    for (const chunk of chunks) expect(chunk.model).toBe(MODEL);
    expect(out.content).toBe('Bonjour tout le monde!');
    expect(out.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 4 });
  });

  it('streamed tool call', async () => {
    t.upstream.enqueue({ kind: 'message', toolPlan: 'Look it up.', toolCalls: [{ id: 'get_weather_1', name: 'get_weather', arguments: '{"city":"Lyon"}' }] });
    await expectStreamedLyonCall(t.client, 'get_weather_1');
  });

  it('reasoning_effort reaches a reasoning model as thinking, whose content comes back as reasoning_content, buffered and streamed', async () => {
    const reply = { kind: 'message' as const, thinking: 'Lyon is in France.', text: 'Sunny.' };
    t.upstream.enqueue(reply, reply);
    const params = { model: 'reasoning', messages: [{ role: 'user' as const, content: 'Weather in Lyon?' }], reasoning_effort: 'medium' as const, max_tokens: 300 };
    await expectReasoningBothWays(t.client, params, 'Sunny.', 'Lyon is in France.');
    // Cohere counts the thinking in max_tokens: the client's 300 stay the answer's, the budget goes on top.
    for (const rec of t.upstream.requests.slice(-2)) expect(rec.body).toMatchObject({ thinking: { type: 'enabled', token_budget: 8192 }, max_tokens: 8492 });
  });

  it('reasoning_effort to a model that does not reason is not sent (the server refuses thinking there)', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'Hi.' });
    const res = await t.client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high' });
    expect(res.choices[0]!.message.content).toBe('Hi.');
    expect(t.upstream.requests.at(-1)!.body).not.toHaveProperty('thinking');
  });
});

