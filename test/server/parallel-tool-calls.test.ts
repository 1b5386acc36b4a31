/**
 * `parallel_tool_calls: false` through a real gateway to the native providers with no switch
 * for it (Gemini, Cohere, Ollama), each behind the loopback server that speaks its wire format.
 * Their models may call several tools anyway: the client gets the first call only, buffered
 * and streamed (no piece of a later call on the wire), finish_reason `tool_calls`, and the
 * upstream's usage as it reported it.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleStream } from '../helpers/assemble-stream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startCohereServer, type CohereServer } from '../servers/cohere-server.js';
import { startGeminiServer, type GeminiServer } from '../servers/gemini-server.js';
import { startOllamaServer, type OllamaServer } from '../servers/ollama-server.js';

let gemini: GeminiServer;
let cohere: CohereServer;
let ollama: OllamaServer;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  [gemini, cohere, ollama] = await Promise.all([startGeminiServer(), startCohereServer(), startOllamaServer()]);
  gw = await startGateway(
    {
      providers: [
        { id: 'ge', type: 'gemini', baseUrl: gemini.url, apiKey: '${K}' },
        { id: 'co', type: 'cohere', baseUrl: cohere.url, apiKey: '${K}' },
        { id: 'ol', type: 'ollama', baseUrl: ollama.url },
      ],
      models: [
        { name: 'gemini', deployments: [{ provider: 'ge', model: 'gemini-2.5-flash' }] },
        { name: 'cohere', deployments: [{ provider: 'co', model: 'command-a-03-2025' }] },
        { name: 'ollama', deployments: [{ provider: 'ol', model: 'llama3.2' }] },
      ],
    },
    { env: { K: 'k' } },
  );
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
});
afterAll(async () => {
  await gw.close(0);
  await Promise.all([gemini.close(), cohere.close(), ollama.close()]);
});

type Provider = 'gemini' | 'cohere' | 'ollama';
const PROVIDERS: Provider[] = ['gemini', 'cohere', 'ollama'];

/** Each provider's answer calling two tools (Cohere's streamed as separate events, the others' in one). */
const twoCalls: Record<Provider, () => void> = {
  gemini: () => gemini.enqueue({ kind: 'function_call', text: 'Checking.', calls: [{ name: 'weather', args: { city: 'Paris' } }, { name: 'time', args: { zone: 'CET' } }] }),
  cohere: () =>
    cohere.enqueue({ kind: 'message', toolPlan: 'Both.', toolCalls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' }, { id: 'c2', name: 'time', arguments: '{"zone":"CET"}' }] }),
  ollama: () => ollama.enqueue({ kind: 'message', toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }, { name: 'time', arguments: { zone: 'CET' } }] }),
};
const lastBody: Record<Provider, () => unknown> = {
  gemini: () => gemini.requests.at(-1)!.body,
  cohere: () => cohere.requests.at(-1)!.body,
  ollama: () => ollama.requests.at(-1)!.body,
};

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  { type: 'function', function: { name: 'time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
];
const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
const ask = (model: Provider, parallel?: boolean) => ({ model, messages, tools, ...(parallel === undefined ? {} : { parallel_tool_calls: parallel }) });

const namesAndArgs = (calls: readonly { function: { name: string; arguments: string } }[] | undefined) =>
  calls?.map((c) => [c.function.name, JSON.parse(c.function.arguments) as unknown]);

describe('parallel_tool_calls: false on providers without a switch for it', () => {
  it.each(PROVIDERS)('%s: buffered, the first call only; finish_reason and usage as the model answered', async (model) => {
    twoCalls[model]();
    const both = await client.chat.completions.create(ask(model));
    expect(namesAndArgs(both.choices[0]!.message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[])).toEqual([
      ['weather', { city: 'Paris' }],
      ['time', { zone: 'CET' }],
    ]);
    const sentBoth = lastBody[model]();

    twoCalls[model]();
    const one = await client.chat.completions.create(ask(model, false));
    expect(namesAndArgs(one.choices[0]!.message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[])).toEqual([['weather', { city: 'Paris' }]]);
    expect(one.choices[0]!.message.tool_calls![0]!.id).toBeTruthy();
    expect(one.choices[0]!.finish_reason).toBe('tool_calls');
    // The dropped call was generated and billed all the same.
    expect(one.usage).toEqual(both.usage);
    // Nothing in the provider's request says it: it has no field for it.
    expect(lastBody[model]()).toEqual(sentBoth);
  });

  it.each(PROVIDERS)('%s: streamed, no piece of the second call reaches the client', async (model) => {
    twoCalls[model]();
    const all = await assembleStream(await client.chat.completions.create({ ...ask(model, true), stream: true, stream_options: { include_usage: true } }));
    expect(all.out.tool_calls).toHaveLength(2);

    twoCalls[model]();
    const { out, chunks } = await assembleStream(await client.chat.completions.create({ ...ask(model, false), stream: true, stream_options: { include_usage: true } }));
    expect(namesAndArgs(out.tool_calls)).toEqual([['weather', { city: 'Paris' }]]);
    expect(chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? [])).every((d) => d.index === 0)).toBe(true);
    // No chunk emptied of its pieces goes out: each says something.
    for (const c of chunks) for (const ch of c.choices) expect(ch.finish_reason !== null || Object.keys(ch.delta).length > 0).toBe(true);
    expect(out.finish_reason).toBe('tool_calls');
    expect(out.usage).toEqual(all.out.usage);
  });
});

describe('gemini: calls in separate events, several candidates', () => {
  const call = (name: string, args: Record<string, unknown>) => ({ functionCall: { name, args } });
  const event = (parts: unknown[], last: boolean) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    ...(last ? { usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 11, totalTokenCount: 18 } } : {}),
    modelVersion: 'gemini-2.5-flash',
  });

  it('a second call in an event of its own never goes out', async () => {
    gemini.enqueue({ kind: 'raw', events: [event([call('weather', { city: 'Paris' })], false), event([call('time', { zone: 'CET' })], true)] });
    const { out, chunks } = await assembleStream(await client.chat.completions.create({ ...ask('gemini', false), stream: true, stream_options: { include_usage: true } }));
    expect(namesAndArgs(out.tool_calls)).toEqual([['weather', { city: 'Paris' }]]);
    expect(chunks.some((c) => c.choices.some((ch) => ch.delta.tool_calls?.some((d) => d.index !== 0)))).toBe(false);
    expect(out.finish_reason).toBe('tool_calls');
    expect(out.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 });
  });

  it('each candidate keeps its own first call (n: 2), buffered and streamed', async () => {
    twoCalls.gemini();
    const res = await client.chat.completions.create({ ...ask('gemini', false), n: 2 });
    expect(res.choices.map((c) => namesAndArgs(c.message.tool_calls as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[]))).toEqual([
      [['weather', { city: 'Paris' }]],
      [['weather', { city: 'Paris' }]],
    ]);

    twoCalls.gemini();
    const stream = await client.chat.completions.create({ ...ask('gemini', false), n: 2, stream: true });
    const calls: Record<number, string[]> = {};
    for await (const c of stream) {
      for (const ch of c.choices) for (const d of ch.delta.tool_calls ?? []) (calls[ch.index] ??= []).push(`${d.index}:${d.function?.name}`);
    }
    expect(calls).toEqual({ 0: ['0:weather'], 1: ['0:weather'] });
  });
});
