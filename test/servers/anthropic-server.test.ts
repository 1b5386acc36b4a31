/**
 * Proves the loopback Anthropic server faithful: the official @anthropic-ai/sdk,
 * which parses Anthropic's real wire format, is driven against it unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Anthropic, {
  APIError,
  AuthenticationError,
  BadRequestError,
  OverloadedError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import { DEFAULT_REPLY_TEXT, startAnthropicServer, type AnthropicServer } from './anthropic-server.js';

const MODEL = 'claude-sonnet-4-20250514';
let server: AnthropicServer;
let client: Anthropic;

beforeAll(async () => {
  server = await startAnthropicServer(undefined, { apiKey: 'sk-ant-test' });
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.url, maxRetries: 0 });
});
afterAll(() => server.close());

const weatherTool = {
  name: 'get_weather',
  description: 'Get the current weather in a given location',
  input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] },
};

describe('anthropic loopback server, driven by the official SDK', () => {
  it('answers messages.create buffered, and records what the SDK sent', async () => {
    const before = server.requests.length;
    const msg = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello, Claude' }],
    });
    expect(msg.type).toBe('message');
    expect(msg.role).toBe('assistant');
    expect(msg.model).toBe(MODEL);
    expect(msg.id).toMatch(/^msg_/);
    expect(msg.content).toEqual([{ type: 'text', text: DEFAULT_REPLY_TEXT }]);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);

    const rec = server.requests[before]!;
    expect(rec.path).toBe('/v1/messages');
    // SDK 1.x: Bearer auth and API version 2026-10-21 (the adapter sends x-api-key and 2023-06-01).
    expect(rec.headers.authorization).toBe('Bearer sk-ant-test');
    expect(rec.headers['anthropic-version']).toBe('2026-10-21');
    expect(rec.body).toMatchObject({ model: MODEL, max_tokens: 64, system: 'Be brief.' });
  });

  it('streams with stream: true in Anthropic event order', async () => {
    server.enqueue({ text: 'Hello there, streaming world!', chunkSize: 5 });
    const stream = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    const types: string[] = [];
    let text = '';
    let stopReason: string | null = null;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
      if (ev.type === 'message_delta') stopReason = ev.delta.stop_reason;
    }
    expect(text).toBe('Hello there, streaming world!');
    expect(stopReason).toBe('end_turn');
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types.filter((t) => t === 'content_block_delta')).toHaveLength(6);
  });

  it('serves a tool call that the SDK accumulates, buffered and streamed alike', async () => {
    const reply = { text: 'Let me check.', toolUses: [{ id: 'toolu_01abc', name: 'get_weather', input: { location: 'Paris, FR' } }] };
    server.enqueue(reply, reply);
    const params = {
      model: MODEL,
      max_tokens: 256,
      tools: [weatherTool],
      messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
    };
    const buffered = await client.messages.create(params);
    const streamed = await client.messages.stream(params).finalMessage();
    for (const msg of [buffered, streamed]) {
      expect(msg.stop_reason).toBe('tool_use');
      expect(msg.content).toEqual([
        expect.objectContaining({ type: 'text', text: 'Let me check.' }),
        { type: 'tool_use', id: 'toolu_01abc', name: 'get_weather', input: { location: 'Paris, FR' } },
      ]);
    }
    expect(streamed.usage).toEqual(buffered.usage);

    // The follow-up turn with the tool result is accepted.
    const followUp = await client.messages.create({
      ...params,
      messages: [
        ...params.messages,
        { role: 'assistant', content: buffered.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01abc', content: '15 degrees' }] },
      ],
    });
    expect(followUp.stop_reason).toBe('end_turn');
  });

  it('a 529 is the SDK OverloadedError, with the error body', async () => {
    server.enqueue({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' });
    const err = await client.messages
      .create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OverloadedError);
    expect((err as APIError).status).toBe(529);
    expect((err as APIError).type).toBe('overloaded_error');
    expect((err as APIError).requestID).toMatch(/^req_/);
  });

  it('a 429 is the SDK RateLimitError, with retry-after', async () => {
    server.enqueue({ kind: 'error', status: 429, type: 'rate_limit_error', message: 'Rate limited', headers: { 'retry-after': '7' } });
    const err = await client.messages
      .create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as APIError).headers?.get('retry-after')).toBe('7');
  });

  it('an error event mid-stream surfaces as the SDK APIError of that type', async () => {
    server.enqueue({ text: 'Once upon a time', errorAfterEvents: { after: 4, type: 'overloaded_error', message: 'Overloaded' } });
    const stream = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Story?' }],
      stream: true,
    });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const ev of stream) seen.push(ev.type);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).type).toBe('overloaded_error');
    expect(seen).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
  });

  it('takes temperature on version 2023-06-01 only, as the real API does', async () => {
    const params = { model: MODEL, max_tokens: 8, temperature: 0.5, messages: [{ role: 'user' as const, content: 'x' }] };
    await expect(client.messages.create(params)).rejects.toBeInstanceOf(BadRequestError);
    const pinned = new Anthropic({
      apiKey: 'sk-ant-test',
      baseURL: server.url,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-version': '2023-06-01' },
    });
    await expect(pinned.messages.create(params)).resolves.toMatchObject({ type: 'message' });
  });

  it('rejects what the real API rejects: wrong key, trailing whitespace on a prefill', async () => {
    const stranger = new Anthropic({ apiKey: 'wrong', baseURL: server.url, maxRetries: 0 });
    await expect(
      stranger.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(AuthenticationError);
    await expect(
      client.messages.create({
        model: MODEL,
        max_tokens: 8,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'The answer is ' },
        ],
      }),
    ).rejects.toBeInstanceOf(BadRequestError);
  });

  it('takes the SDK\'s prompt-cache breakpoints (system blocks, tools), reports cache writes, and refuses a fifth breakpoint', async () => {
    const mark = { type: 'ephemeral' as const };
    server.enqueue({ usage: { input_tokens: 12, cache_creation_input_tokens: 2048, output_tokens: 5 } });
    const msg = await client.messages.create({
      model: MODEL,
      max_tokens: 16,
      tools: [{ ...weatherTool, cache_control: { type: 'ephemeral', ttl: '1h' } }],
      system: [{ type: 'text', text: 'A long handbook.', cache_control: mark }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Chapter 2?', cache_control: mark }] }],
    });
    expect(msg.usage.cache_creation_input_tokens).toBe(2048);
    expect(server.requests.at(-1)!.body!.system).toEqual([{ type: 'text', text: 'A long handbook.', cache_control: mark }]);
    const five = Array.from({ length: 5 }, (_, i) => ({ type: 'text' as const, text: `part ${i}`, cache_control: mark }));
    await expect(client.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: five }] })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('speaks extended thinking as the SDK parses it: thinking and redacted_thinking blocks, thinking_delta and signature_delta events', async () => {
    const reply = { thinking: 'Two plus two is four.', redactedThinking: 'EmwKAhgBEgy3va3pzix', text: '4', chunkSize: 6 };
    server.enqueue(reply, reply);
    const params = {
      model: MODEL,
      max_tokens: 4096,
      thinking: { type: 'enabled' as const, budget_tokens: 2048 },
      messages: [{ role: 'user' as const, content: '2 + 2?' }],
    };
    const buffered = await client.messages.create(params);
    const stream = client.messages.stream(params);
    const deltas: string[] = [];
    stream.on('thinking', (delta) => deltas.push(delta));
    let signature = '';
    stream.on('signature', (s) => (signature = s));
    const streamed = await stream.finalMessage();
    for (const msg of [buffered, streamed]) {
      expect(msg.content).toEqual([
        { type: 'thinking', thinking: 'Two plus two is four.', signature: 'c2lnbmF0dXJl' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
        expect.objectContaining({ type: 'text', text: '4' }),
      ]);
    }
    expect(deltas.join('')).toBe('Two plus two is four.');
    expect(deltas.length).toBeGreaterThan(1);
    expect(signature).toBe('c2lnbmF0dXJl');
  });

  it('takes adaptive thinking with output_config.effort, and refuses what the real API refuses beside thinking', async () => {
    const ok = await client.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 4096,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(ok.type).toBe('message');
    expect(server.requests.at(-1)!.body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } });
    const base = { model: MODEL, max_tokens: 4096, messages: [{ role: 'user' as const, content: 'hi' }] };
    const enabled = { type: 'enabled' as const, budget_tokens: 2048 };
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{ thinking: { type: 'enabled', budget_tokens: 512 } }, /greater than or equal to 1024/],
      [{ thinking: { type: 'enabled', budget_tokens: 4096 } }, /`max_tokens` must be greater than `thinking.budget_tokens`/],
      [{ thinking: enabled, temperature: 0.5 }, /`temperature` may only be set to 1 when thinking is enabled/],
      [{ thinking: enabled, top_p: 0.5 }, /`top_p` must be greater than or equal to 0.95/],
      [{ thinking: enabled, tools: [weatherTool], tool_choice: { type: 'any' } }, /tool_choice forces tool use/],
      [{ thinking: enabled, messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Once' }] }, /must start with a thinking block/],
      [{ thinking: { type: 'adaptive' }, output_config: { effort: 'extreme' } }, /output_config.effort/],
    ];
    // The adapter's version, which still takes sampling parameters.
    const pinned = new Anthropic({ apiKey: 'sk-ant-test', baseURL: server.url, maxRetries: 0, defaultHeaders: { 'anthropic-version': '2023-06-01' } });
    for (const [over, message] of refusals) {
      const err = await pinned.messages.create({ ...base, ...over } as never).catch((e: unknown) => e);
      expect(err, JSON.stringify(over)).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).message).toMatch(message);
    }
  });
});

