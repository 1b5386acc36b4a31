/**
 * The loopback Cohere server is only useful if it is faithful: the official
 * `cohere-ai` SDK must read what it writes exactly as it reads api.cohere.com.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CohereClientV2, CohereError } from 'cohere-ai';
import { startCohereServer, type CohereServer } from './cohere-server.js';

let server: CohereServer;
let client: CohereClientV2;

beforeAll(async () => {
  server = await startCohereServer({ apiKey: 'test-key' });
  client = new CohereClientV2({ token: 'test-key', environment: server.url, maxRetries: 0 });
});
afterAll(() => server.close());

describe('cohere loopback server, read by the official cohere-ai SDK', () => {
  it('answers a buffered chat the SDK parses', async () => {
    server.enqueue({ kind: 'message', text: 'Paris is the capital.' });
    const res = await client.chat({ model: 'command-r-plus', messages: [{ role: 'user', content: 'Capital of France?' }] });
    expect(res.finishReason).toBe('COMPLETE');
    expect(res.message.content).toEqual([{ type: 'text', text: 'Paris is the capital.' }]);
    expect(res.usage?.billedUnits).toEqual({ inputTokens: 12, outputTokens: 4 });
    const req = server.requests.at(-1)!;
    expect(req.path).toBe('/v2/chat');
    expect(req.headers.authorization).toBe('Bearer test-key');
    expect(req.body).toMatchObject({ model: 'command-r-plus', stream: false });
  });

  it('answers a buffered tool call the SDK parses', async () => {
    server.enqueue({
      kind: 'message',
      toolPlan: 'I will look up the weather.',
      toolCalls: [{ id: 'get_weather_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    const res = await client.chat({
      model: 'command-r-plus',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    expect(res.finishReason).toBe('TOOL_CALL');
    expect(res.message.toolPlan).toBe('I will look up the weather.');
    expect(res.message.toolCalls).toEqual([
      { id: 'get_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
  });

  it('streams text events the SDK iterates, ending at message-end', async () => {
    server.enqueue({ kind: 'message', text: 'Hello there world' });
    const stream = await client.chatStream({ model: 'command-r-plus', messages: [{ role: 'user', content: 'hi' }] });
    const types: string[] = [];
    let text = '';
    let finish: string | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content-delta') text += ev.delta?.message?.content?.text ?? '';
      if (ev.type === 'message-end') finish = ev.delta?.finishReason;
    }
    expect(text).toBe('Hello there world');
    expect(finish).toBe('COMPLETE');
    expect(types[0]).toBe('message-start');
    expect(types.at(-1)).toBe('message-end');
    expect(types).toContain('content-start');
    expect(types).toContain('content-end');
    expect(server.requests.at(-1)!.body).toMatchObject({ stream: true });
  });

  it('streams tool-call events the SDK iterates', async () => {
    server.enqueue({
      kind: 'message',
      toolPlan: 'Checking.',
      toolCalls: [{ id: 'get_weather_2', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
    });
    const stream = await client.chatStream({ model: 'command-r-plus', messages: [{ role: 'user', content: 'Weather?' }] });
    let name: string | undefined;
    let id: string | undefined;
    let args = '';
    let plan = '';
    let finish: string | undefined;
    for await (const ev of stream) {
      if (ev.type === 'tool-plan-delta') plan += ev.delta?.message?.toolPlan ?? '';
      if (ev.type === 'tool-call-start') {
        id = ev.delta?.message?.toolCalls?.id;
        name = ev.delta?.message?.toolCalls?.function?.name;
      }
      if (ev.type === 'tool-call-delta') args += ev.delta?.message?.toolCalls?.function?.arguments ?? '';
      if (ev.type === 'message-end') finish = ev.delta?.finishReason;
    }
    expect({ id, name, args, plan, finish }).toEqual({
      id: 'get_weather_2',
      name: 'get_weather',
      args: '{"city":"Oslo"}',
      plan: 'Checking.',
      finish: 'TOOL_CALL',
    });
  });

  it('embeds texts the SDK parses', async () => {
    const res = await client.embed({
      model: 'embed-english-v3.0',
      texts: ['alpha', 'beta'],
      inputType: 'search_document',
      embeddingTypes: ['float'],
    });
    expect(res.embeddings.float).toHaveLength(2);
    expect(res.meta?.billedUnits?.inputTokens).toBe(6);
    expect(server.requests.at(-1)!.body).toEqual({
      model: 'embed-english-v3.0',
      texts: ['alpha', 'beta'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
  });

  it('answers a scripted error status and body the SDK surfaces', async () => {
    server.enqueue({ kind: 'error', status: 429, body: { id: 'x', message: 'trial key rate limit exceeded' } });
    const err = await client.chat({ model: 'command-r-plus', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CohereError);
    expect((err as CohereError).statusCode).toBe(429);
    expect((err as CohereError).body).toEqual({ id: 'x', message: 'trial key rate limit exceeded' });
  });

  it('refuses a wrong API key the way Cohere does', async () => {
    const other = new CohereClientV2({ token: 'wrong', environment: server.url, maxRetries: 0 });
    const err = await other.chat({ model: 'command-r-plus', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((err as CohereError).statusCode).toBe(401);
  });

  it('cuts a stream after N events: the SDK sees a truncated stream', async () => {
    server.enqueue({ kind: 'message', text: 'one two three four', cutAfter: 3 });
    const stream = await client.chatStream({ model: 'command-r-plus', messages: [{ role: 'user', content: 'hi' }] });
    const types: string[] = [];
    const err = await (async () => {
      for await (const ev of stream) types.push(ev.type);
    })().catch((e: unknown) => e);
    expect(types).toEqual(['message-start', 'content-start', 'content-delta']);
    expect(err).toBeInstanceOf(Error);
  });

  it('speaks a reasoning model\'s thinking as the SDK reads it: thinking content items, and thinking deltas in a stream', async () => {
    const reasoning = 'command-a-reasoning-08-2025';
    const reply = { kind: 'message' as const, thinking: 'Paris is in France.', text: 'Paris.' };
    server.enqueue(reply, reply, reply);
    const messages = [{ role: 'user' as const, content: 'Capital of France?' }];
    const res = await client.chat({ model: reasoning, messages, thinking: { type: 'enabled', tokenBudget: 2048 } });
    expect(res.message.content).toEqual([
      { type: 'thinking', thinking: 'Paris is in France.' },
      { type: 'text', text: 'Paris.' },
    ]);
    // The SDK's camelCase goes on the wire as Cohere's snake_case.
    expect(server.requests.at(-1)!.body).toMatchObject({ thinking: { type: 'enabled', token_budget: 2048 } });

    const stream = await client.chatStream({ model: reasoning, messages, thinking: { type: 'enabled', tokenBudget: 2048 } });
    let thinking = '';
    let text = '';
    let startType: string | undefined;
    for await (const ev of stream) {
      if (ev.type === 'content-start' && ev.index === 0) startType = ev.delta?.message?.content?.type;
      if (ev.type === 'content-delta') {
        thinking += ev.delta?.message?.content?.thinking ?? '';
        text += ev.delta?.message?.content?.text ?? '';
      }
    }
    expect(startType).toBe('thinking');
    expect(thinking).toBe('Paris is in France.');
    expect(text).toBe('Paris.');

    // Disabled: no thinking comes back.
    const off = await client.chat({ model: reasoning, messages, thinking: { type: 'disabled' } });
    expect(off.message.content).toEqual([{ type: 'text', text: 'Paris.' }]);
  });

  it('refuses thinking asked of a model that does not reason, and a budget that is not a positive integer', async () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    await expect(client.chat({ model: 'command-r-plus', messages, thinking: { type: 'enabled' } })).rejects.toThrow(/not supported by model/);
    await expect(client.chat({ model: 'command-a-reasoning-08-2025', messages, thinking: { type: 'enabled', tokenBudget: 0 } })).rejects.toThrow(/positive integer/);
  });
});

