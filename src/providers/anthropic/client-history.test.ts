/**
 * What OpenAI clients send that the Messages API takes differently, end to end:
 * the official `openai` client → a real listening gateway → the anthropic
 * adapter → the loopback Anthropic server, which refuses what the real API
 * refuses (repeated tool_use ids, whitespace-only stop sequences, temperature
 * beside top_p on newer models).
 */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { openaiThroughGateway } from '../../../test/helpers/openai-through-gateway.js';
import { startAnthropicServer } from '../../../test/servers/anthropic-server.js';

const MODEL = 'claude-sonnet-4-5';
const t = openaiThroughGateway({
  upstream: () => startAnthropicServer(undefined, { apiKey: 'sk-ant-gateway', oneSamplingParameter: true }),
  config: (url) => ({
    resilience: { maxRetries: 0 },
    providers: [
      { id: 'claude', type: 'anthropic', baseUrl: url, apiKey: '${ANTHROPIC_API_KEY}' },
      { id: 'backup', type: 'simulated', simulate: { latencyMs: 0, reply: 'from the backup' } },
    ],
    models: [
      { name: 'smart', deployments: [{ provider: 'claude', model: MODEL, capabilities: ['tools'] }] },
      { name: 'chained', deployments: [{ provider: 'claude', model: MODEL }], fallbacks: ['spare'] },
      { name: 'spare', deployments: [{ provider: 'backup', model: 'sim-1' }] },
    ],
  }),
  options: { env: { ANTHROPIC_API_KEY: 'sk-ant-gateway' } },
});

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];
const call = (id: string, city: string): OpenAI.Chat.Completions.ChatCompletionMessageParam => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } }],
});

describe('openai SDK → gateway → anthropic: what OpenAI takes and Anthropic refuses', () => {
  it('a history whose server numbered its tool calls per answer (call_0 in every turn) goes out with unique ids, each result answering its own turn', async () => {
    const done = await t.client.chat.completions.create({
      model: 'smart',
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris, then Rome?' },
        call('call_0', 'Paris'),
        { role: 'tool', tool_call_id: 'call_0', content: 'sunny' },
        call('call_0', 'Rome'),
        { role: 'tool', tool_call_id: 'call_0', content: 'rainy' },
      ],
    });
    expect(done.choices[0]!.finish_reason).toBe('stop');
    const sent = t.upstream.requests.at(-1)!.body!.messages as { role: string; content: { type: string; id?: string; tool_use_id?: string; content?: string }[] }[];
    const uses = sent.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_use');
    const results = sent.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result');
    expect(new Set(uses.map((u) => u.id)).size).toBe(2);
    expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([
      [uses[0]!.id, 'sunny'],
      [uses[1]!.id, 'rainy'],
    ]);
  });

  it('stop: ["\\n"] is refused for the Anthropic candidate, naming the field, and a fallback serves it', async () => {
    const before = t.upstream.requests.length;
    const err = await t.client.chat.completions
      .create({ model: 'smart', messages: [{ role: 'user', content: 'One line, please.' }], stop: ['\n'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('stop');
    expect((err as Error).message).toMatch(/anthropic.*whitespace/);
    expect(t.upstream.requests.length).toBe(before);

    const served = await t.client.chat.completions.create({ model: 'chained', messages: [{ role: 'user', content: 'One line.' }], stop: '\n' });
    expect(served.choices[0]!.message.content).toContain('from the backup');

    // A stop sequence with text in it still goes out as is.
    await t.client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'Hi' }], stop: ['\nEND', 'Human:'] });
    expect(t.upstream.requests.at(-1)!.body!.stop_sequences).toEqual(['\nEND', 'Human:']);
  });

  it('temperature and top_p: only one goes out — the one that changes anything, else the temperature', async () => {
    await t.client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2, top_p: 1 });
    expect(t.upstream.requests.at(-1)!.body).toMatchObject({ temperature: 0.2 });
    expect(t.upstream.requests.at(-1)!.body).not.toHaveProperty('top_p');

    await t.client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'Hi' }], temperature: 1, top_p: 0.5 });
    expect(t.upstream.requests.at(-1)!.body).toMatchObject({ top_p: 0.5 });
    expect(t.upstream.requests.at(-1)!.body).not.toHaveProperty('temperature');

    // Two values that both change something: the temperature goes out, as newer models take only one.
    await t.client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.3, top_p: 0.9 });
    expect(t.upstream.requests.at(-1)!.body).toMatchObject({ temperature: 0.3 });
    expect(t.upstream.requests.at(-1)!.body).not.toHaveProperty('top_p');

    // Either alone goes out as before.
    await t.client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'Hi' }], top_p: 1 });
    expect(t.upstream.requests.at(-1)!.body).toMatchObject({ top_p: 1 });
  });
});
