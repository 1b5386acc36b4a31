/**
 * End to end: the official `openai` client → a real listening gateway → this
 * adapter → the loopback Anthropic server. Buffered and streamed, with a tool
 * call; what the client assembles must match on both paths.
 */
import { describe, expect, it } from 'vitest';
import { assembleStream } from '../../../test/helpers/assemble-stream.js';
import { expectResumedStory, parisToolResultTurn, parisWeatherFunctions, parisWeatherTools, PARIS_WEATHER } from '../../../test/helpers/client-turns.js';
import { openaiThroughGateway } from '../../../test/helpers/openai-through-gateway.js';
import { startAnthropicServer, type MessageReply } from '../../../test/servers/anthropic-server.js';
import { createAnthropicAdapter } from './index.js';

const MODEL = 'claude-sonnet-4-20250514';
const t = openaiThroughGateway({
  upstream: () => startAnthropicServer(undefined, { apiKey: 'sk-ant-gateway' }),
  config: (url) => ({
    providers: [{ id: 'claude', type: 'anthropic', baseUrl: url, apiKey: '${ANTHROPIC_API_KEY}' }],
    models: [{ name: 'smart', deployments: [{ provider: 'claude', model: MODEL, capabilities: ['tools', 'vision', 'prefill'] }] }],
  }),
  // Until the registry lists `anthropic`, the factory is passed in the way embedders would.
  options: { env: { ANTHROPIC_API_KEY: 'sk-ant-gateway' }, adapters: { anthropic: createAnthropicAdapter } },
  clientApiKey: 'no-client-keys-configured',
});

const tools = parisWeatherTools();
const messages = PARIS_WEATHER;
const reply: MessageReply = {
  text: 'Checking the forecast.',
  toolUses: [{ id: 'toolu_01gw', name: 'get_weather', input: { location: 'Paris, FR' } }],
  chunkSize: 3,
};

describe('openai SDK → gateway → anthropic adapter → loopback Anthropic', () => {
  it('buffered and streamed completions with a tool call agree', async () => {
    t.upstream.enqueue(reply, reply);
    const { data: buffered, response } = await t.client.chat.completions
      .create({ model: 'smart', messages, tools, tool_choice: 'auto' })
      .withResponse();
    expect(response.headers.get('x-switchyard-deployment')).toBe(`claude/${MODEL}`);
    expect(buffered.model).toBe(MODEL);
    expect(buffered.choices[0]!.finish_reason).toBe('tool_calls');
    expect(buffered.choices[0]!.message.content).toBe('Checking the forecast.');
    expect(buffered.choices[0]!.message.tool_calls).toEqual([
      { id: 'toolu_01gw', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, FR"}' } },
    ]);
    expect(buffered.usage!.prompt_tokens).toBeGreaterThan(0);

    const stream = t.client.chat.completions.stream({
      model: 'smart',
      messages,
      tools,
      tool_choice: 'auto',
      stream_options: { include_usage: true },
    });
    const streamed = await stream.finalChatCompletion();
    expect(streamed.model).toBe(MODEL);
    expect(streamed.choices[0]!.finish_reason).toBe('tool_calls');
    expect(streamed.choices[0]!.message.content).toBe(buffered.choices[0]!.message.content);
    expect(streamed.choices[0]!.message.tool_calls).toEqual(buffered.choices[0]!.message.tool_calls);
    expect(streamed.usage).toMatchObject({
      prompt_tokens: buffered.usage!.prompt_tokens,
      completion_tokens: buffered.usage!.completion_tokens,
      total_tokens: buffered.usage!.total_tokens,
    });

    // Both went upstream as Anthropic requests, converted.
    const [a, b] = t.upstream.requests.slice(-2);
    for (const rec of [a!, b!]) {
      expect(rec.headers['x-api-key']).toBe('sk-ant-gateway');
      expect(rec.body).toMatchObject({
        model: MODEL,
        system: 'You are a weather assistant.',
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
        tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
        tool_choice: { type: 'auto' },
      });
    }
    expect(b!.body).toMatchObject({ stream: true });
  });

  it('a stream cut mid-answer is resumed through an Anthropic prefill, seamlessly', async () => {
    t.upstream.enqueue(
      // message_start, block start, ping, 'Once ', 'upon ' — then the connection drops.
      { text: 'Once upon a time', chunkSize: 5, cutAfterEvents: 5, cutMode: 'destroy' },
      // Anthropic continues the trimmed prefill 'Once upon' with the space the client already has.
      { text: ' a time, far away.', chunkSize: 4 },
    );
    await expectResumedStory(t.client, 'smart');
    const resumed = t.upstream.requests.at(-1)!.body!;
    expect((resumed.messages as unknown[]).at(-1)).toEqual({ role: 'assistant', content: 'Once upon' });
  });

  it('the tool result turn goes back as an Anthropic tool_result and the answer comes through', async () => {
    t.upstream.enqueue({ text: 'It is 15 degrees in Paris.' });
    const done = await t.client.chat.completions.create({
      model: 'smart',
      tools,
      messages: parisToolResultTurn('toolu_01gw'),
    });
    expect(done.choices[0]!.message.content).toBe('It is 15 degrees in Paris.');
    expect(done.choices[0]!.finish_reason).toBe('stop');
    expect(t.upstream.requests.at(-1)!.body!.messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01gw', name: 'get_weather', input: { location: 'Paris, FR' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01gw', content: '15 degrees' }] },
    ]);
  });
});

describe('legacy function calling (functions, function_call) through the anthropic adapter', () => {
  const functions = parisWeatherFunctions();
  const twoCalls: MessageReply = {
    text: 'Checking the forecast.',
    toolUses: [
      { id: 'toolu_01a', name: 'get_weather', input: { location: 'Paris, FR' } },
      { id: 'toolu_01b', name: 'get_weather', input: { location: 'Lyon, FR' } },
    ],
    chunkSize: 3,
  };

  it('the functions go as tools, the named one forced and one call asked for; the first call comes back as function_call, buffered and streamed', async () => {
    t.upstream.enqueue(twoCalls, twoCalls);
    const buffered = await t.client.chat.completions.create({ model: 'smart', messages, functions, function_call: { name: 'get_weather' } });
    expect(buffered.choices[0]!.finish_reason).toBe('function_call');
    expect(buffered.choices[0]!.message).toMatchObject({ content: 'Checking the forecast.', function_call: { name: 'get_weather', arguments: '{"location":"Paris, FR"}' } });
    expect(buffered.choices[0]!.message.tool_calls).toBeUndefined();

    const stream = await t.client.chat.completions.create({ model: 'smart', messages, functions, function_call: { name: 'get_weather' }, stream: true });
    const { out } = await assembleStream(stream);
    expect(out).toMatchObject({ content: 'Checking the forecast.', finish_reason: 'function_call', function_call: buffered.choices[0]!.message.function_call });
    expect(out.tool_calls).toBeUndefined();

    for (const rec of t.upstream.requests.slice(-2)) {
      expect(rec.body!.tools).toEqual([{ name: 'get_weather', description: 'Get the current weather', input_schema: functions[0]!.parameters }]);
      expect(rec.body!.tool_choice).toEqual({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
    }
  });

  it("the SDK's stream helper reads the legacy answer as OpenAI's", async () => {
    t.upstream.enqueue(twoCalls);
    const final = await t.client.chat.completions.stream({ model: 'smart', messages, functions }).finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('function_call');
    expect(final.choices[0]!.message.function_call).toEqual({ name: 'get_weather', arguments: '{"location":"Paris, FR"}' });
    expect(t.upstream.requests.at(-1)!.body!.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('the legacy follow-up (function_call, then the function result) goes back as tool_use and tool_result', async () => {
    t.upstream.enqueue({ text: 'It is 15 degrees in Paris.' });
    const done = await t.client.chat.completions.create({
      model: 'smart',
      functions,
      messages: [
        ...messages,
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"location":"Paris, FR"}' } },
        { role: 'function', name: 'get_weather', content: '15 degrees' },
      ],
    });
    expect(done.choices[0]!.message.content).toBe('It is 15 degrees in Paris.');
    expect(done.choices[0]!.finish_reason).toBe('stop');
    const sent = t.upstream.requests.at(-1)!.body!.messages as { role: string; content: { type: string }[] }[];
    expect(sent.slice(1).map((m) => [m.role, m.content.map((b) => b.type)])).toEqual([
      ['assistant', ['tool_use']],
      ['user', ['tool_result']],
    ]);
  });

  it('reasoning_effort goes upstream as extended thinking, and the thinking comes back as reasoning_content, buffered and streamed', async () => {
    const thought = { thinking: 'Paris is in France; check the forecast there.', text: 'Sunny.', chunkSize: 7 };
    t.upstream.enqueue(thought, thought);
    const params = { model: 'smart', messages, reasoning_effort: 'low' as const, temperature: 0.2, max_tokens: 200 };
    const buffered = await t.client.chat.completions.create(params);
    const message = buffered.choices[0]!.message as typeof buffered.choices[0]['message'] & { reasoning_content?: string };
    expect(message.content).toBe('Sunny.');
    expect(message.reasoning_content).toBe(thought.thinking);

    const stream = await t.client.chat.completions.create({ ...params, stream: true });
    const { out, chunks } = await assembleStream(stream);
    expect(out.content).toBe('Sunny.');
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '');
    expect(reasoning.join('')).toBe(thought.thinking);
    expect(reasoning.filter(Boolean).length).toBeGreaterThan(1);

    // The loopback server refuses thinking beside a temperature, and a budget not under max_tokens: both were sent as it takes them.
    for (const rec of t.upstream.requests.slice(-2)) {
      expect(rec.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 2248 });
      expect(rec.body).not.toHaveProperty('temperature');
    }
  });

  it('reasoning_effort on a model that thinks only adaptively (Claude Fable 5) goes as adaptive thinking, not a budget it refuses', async () => {
    t.upstream.enqueue({ thinking: 'Weighing it.', text: 'Sunny.' });
    const res = await t.client.chat.completions.create({ model: 'claude/claude-fable-5', messages, reasoning_effort: 'high' });
    expect(res.choices[0]!.message.content).toBe('Sunny.');
    expect(t.upstream.requests.at(-1)!.body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
  });

  it('reasoning_effort on a model whose thinking is omitted by default (Opus 4.7) asks for it summarized: reasoning_content comes back, buffered and streamed', async () => {
    const thought = { thinking: 'Paris is in France; check the forecast there.', text: 'Sunny.', chunkSize: 7 };
    t.upstream.enqueue(thought, thought);
    const params = { model: 'claude/claude-opus-4-7', messages, reasoning_effort: 'high' as const };
    const buffered = await t.client.chat.completions.create(params);
    expect((buffered.choices[0]!.message as { reasoning_content?: string }).reasoning_content).toBe(thought.thinking);
    const { chunks } = await assembleStream(await t.client.chat.completions.create({ ...params, stream: true }));
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '');
    expect(reasoning.join('')).toBe(thought.thinking);
    for (const rec of t.upstream.requests.slice(-2)) expect(rec.body).toMatchObject({ thinking: { type: 'adaptive', display: 'summarized' } });
  });

  it('reasoning_effort where Anthropic would refuse thinking (a forced tool, a tool result being answered) is served without it', async () => {
    t.upstream.enqueue({ toolUses: [{ id: 'toolu_forced', name: 'get_weather', input: { location: 'Paris' } }] }, { text: 'It is 15 degrees.' });
    const forced = await t.client.chat.completions.create({ model: 'smart', messages, tools, tool_choice: 'required', reasoning_effort: 'high' });
    expect(forced.choices[0]!.finish_reason).toBe('tool_calls');
    const answered = await t.client.chat.completions.create({
      model: 'smart',
      tools,
      reasoning_effort: 'high',
      messages: [...messages, forced.choices[0]!.message, { role: 'tool', tool_call_id: 'toolu_forced', content: '15 degrees' }],
    });
    expect(answered.choices[0]!.message.content).toBe('It is 15 degrees.');
    for (const rec of t.upstream.requests.slice(-2)) expect(rec.body).not.toHaveProperty('thinking');
  });
});

