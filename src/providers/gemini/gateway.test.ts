/**
 * End to end: the official `openai` client → a real listening gateway → this
 * adapter → the loopback Gemini server. Buffered and streamed, with a tool
 * call; what the client assembles must match on both paths.
 */
import { describe, expect, it } from 'vitest';
import { assembleStream } from '../../../test/helpers/assemble-stream.js';
import { expectResumedStory, parisToolResultTurn, parisWeatherFunctions, parisWeatherTools, PARIS_WEATHER } from '../../../test/helpers/client-turns.js';
import { openaiThroughGateway } from '../../../test/helpers/openai-through-gateway.js';
import { startGeminiServer, type GeminiReply } from '../../../test/servers/gemini-server.js';
import { createGeminiAdapter } from './index.js';

const MODEL = 'gemini-2.5-flash';
const KEY = 'AIza-gateway-test';
const t = openaiThroughGateway({
  upstream: () => startGeminiServer({ apiKey: KEY, requireThoughtSignatures: true }),
  config: (url) => ({
    providers: [{ id: 'gem', type: 'gemini', baseUrl: url, apiKey: '${GEMINI_API_KEY}' }],
    models: [{ name: 'flash', deployments: [{ provider: 'gem', model: MODEL, capabilities: ['tools', 'vision', 'json', 'prefill'] }] }],
  }),
  // Until the registry lists `gemini`, the factory is passed in the way embedders would.
  options: { env: { GEMINI_API_KEY: KEY }, adapters: { gemini: createGeminiAdapter } },
  clientApiKey: 'no-client-keys-configured',
});

const tools = parisWeatherTools({ additionalProperties: false });
const messages = PARIS_WEATHER;
const reply: GeminiReply = {
  kind: 'function_call',
  text: ['Checking ', 'the forecast.'],
  calls: [{ name: 'get_weather', args: { location: 'Paris, FR' }, thoughtSignature: 'c2lnLWdhdGV3YXk=' }],
  usage: { promptTokenCount: 20, candidatesTokenCount: 9, thoughtsTokenCount: 5 },
};

const OPENAI_CALL_ID = /^call_[A-Za-z0-9]{24}$/;

describe('openai SDK → gateway → gemini adapter → loopback Gemini', () => {
  it('buffered and streamed completions with a tool call agree', async () => {
    t.upstream.enqueue(reply, reply);
    const { data: buffered, response } = await t.client.chat.completions.create({ model: 'flash', messages, tools, tool_choice: 'auto' }).withResponse();
    expect(response.headers.get('x-switchyard-deployment')).toBe(`gem/${MODEL}`);
    expect(buffered.model).toBe(MODEL);
    expect(buffered.choices[0]!.finish_reason).toBe('tool_calls');
    expect(buffered.choices[0]!.message.content).toBe('Checking the forecast.');
    expect(buffered.choices[0]!.message.tool_calls).toMatchObject([
      { id: expect.stringMatching(OPENAI_CALL_ID), type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, FR"}' } },
    ]);
    expect(buffered.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 14, total_tokens: 34 });

    const stream = t.client.chat.completions.stream({ model: 'flash', messages, tools, tool_choice: 'auto', stream_options: { include_usage: true } });
    const streamed = await stream.finalChatCompletion();
    expect(streamed.model).toBe(MODEL);
    expect(streamed.choices[0]!.finish_reason).toBe('tool_calls');
    expect(streamed.choices[0]!.message.content).toBe(buffered.choices[0]!.message.content);
    // Same arguments and thought signature (extra_content) on both paths; each answer's call an id of its own,
    // as OpenAI's are (numbered per answer, every turn's first call was call_0).
    const withoutIds = (calls: ReadonlyArray<{ id: string }> | undefined) => calls?.map(({ id: _id, ...rest }) => rest);
    expect(withoutIds(streamed.choices[0]!.message.tool_calls)).toEqual(withoutIds(buffered.choices[0]!.message.tool_calls));
    expect(streamed.choices[0]!.message.tool_calls![0]!.id).toMatch(OPENAI_CALL_ID);
    expect(streamed.choices[0]!.message.tool_calls![0]!.id).not.toBe(buffered.choices[0]!.message.tool_calls![0]!.id);
    expect(buffered.choices[0]!.message.tool_calls![0]).toHaveProperty('extra_content', { google: { thought_signature: 'c2lnLWdhdGV3YXk=' } });
    expect(streamed.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 14, total_tokens: 34 });

    const [a, b] = t.upstream.requests.slice(-2);
    expect(a!.url).toBe(`/v1beta/models/${MODEL}:generateContent`);
    expect(b!.url).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    for (const rec of [a!, b!]) {
      expect(rec.headers['x-goog-api-key']).toBe(KEY);
      expect(rec.body).toEqual({
        systemInstruction: { parts: [{ text: 'You are a weather assistant.' }] },
        contents: [{ role: 'user', parts: [{ text: 'What is the weather in Paris?' }] }],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'Get the current weather',
                parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
              },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      });
    }
  });

  it('the tool result turn goes back as a functionResponse and the answer comes through', async () => {
    t.upstream.enqueue({ kind: 'text', text: 'It is 15 degrees in Paris.' });
    const done = await t.client.chat.completions.create({
      model: 'flash',
      tools,
      messages: parisToolResultTurn('call_0'),
    });
    expectWeatherAnswered(done, t.upstream.requests.at(-1)!.body.contents);
  });

  it('a stream cut mid-answer is resumed through a trailing model turn (prefill)', async () => {
    t.upstream.enqueue({ kind: 'cut', text: ['Once ', 'upon '] }, { kind: 'text', text: ['a time', ', far away.'] });
    await expectResumedStory(t.client, 'flash');
    expect(t.upstream.requests.at(-1)!.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Tell me a story.' }] },
      { role: 'model', parts: [{ text: 'Once upon ' }] },
    ]);
  });

  it('the thought signature survives the client round trip, so Gemini 3 accepts the follow-up', async () => {
    t.upstream.enqueue(reply);
    const first = await t.client.chat.completions.create({ model: 'flash', messages, tools });
    const assistant = first.choices[0]!.message;
    t.upstream.enqueue({ kind: 'text', text: 'Sunny.' });
    const second = await t.client.chat.completions.create({
      model: 'flash',
      tools,
      messages: [...messages, assistant, { role: 'tool', tool_call_id: assistant.tool_calls![0]!.id, content: '{"sky":"clear"}' }],
    });
    expect(second.choices[0]!.message.content).toBe('Sunny.');
    expect((t.upstream.requests.at(-1)!.body.contents as unknown[])[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Checking the forecast.' },
        { functionCall: { name: 'get_weather', args: { location: 'Paris, FR' } }, thoughtSignature: 'c2lnLWdhdGV3YXk=' },
      ],
    });
  });
});

describe('legacy function calling (functions, function_call) through the gemini adapter', () => {
  const functions = parisWeatherFunctions();
  const twoCalls: GeminiReply = {
    kind: 'function_call',
    calls: [
      { name: 'get_weather', args: { location: 'Paris, FR' }, thoughtSignature: 'c2lnLWdhdGV3YXk=' },
      { name: 'get_weather', args: { location: 'Lyon, FR' } },
    ],
  };

  it('the functions go as declarations with the named one forced; the first call comes back as function_call, buffered and streamed', async () => {
    t.upstream.enqueue(twoCalls, twoCalls);
    const buffered = await t.client.chat.completions.create({ model: 'flash', messages, functions, function_call: { name: 'get_weather' } });
    expect(buffered.choices[0]!.finish_reason).toBe('function_call');
    expect(buffered.choices[0]!.message.function_call).toEqual({ name: 'get_weather', arguments: '{"location":"Paris, FR"}' });
    expect(buffered.choices[0]!.message.tool_calls).toBeUndefined();

    const stream = await t.client.chat.completions.create({ model: 'flash', messages, functions, function_call: { name: 'get_weather' }, stream: true });
    const { out } = await assembleStream(stream);
    expect(out).toMatchObject({ finish_reason: 'function_call', function_call: buffered.choices[0]!.message.function_call });
    expect(out.tool_calls).toBeUndefined();

    for (const rec of t.upstream.requests.slice(-2)) {
      expect(rec.body.tools).toEqual([{ functionDeclarations: [{ name: 'get_weather', description: 'Get the current weather', parameters: expect.objectContaining({ type: 'object' }) }] }]);
      expect(rec.body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } });
    }
  });

  // The legacy form has no place for the call's thought signature: the follow-up still passes Gemini 3's check.
  it('the legacy follow-up (function_call, then the function result) is answered', async () => {
    t.upstream.enqueue(twoCalls, { kind: 'text', text: 'It is 15 degrees in Paris.' });
    const first = await t.client.chat.completions.create({ model: 'flash', messages, functions });
    const call = first.choices[0]!.message.function_call!;
    const done = await t.client.chat.completions.create({
      model: 'flash',
      functions,
      messages: [...messages, { role: 'assistant', content: null, function_call: call }, { role: 'function', name: call.name, content: '15 degrees' }],
    });
    expectWeatherAnswered(done, t.upstream.requests.at(-1)!.body.contents);
  });

  // A blocked prompt has no candidates at all: each of the n answers asked for ends content_filter,
  // where one finish alone read as the other answers cut (a stream_broken error after it).
  it('a blocked prompt streamed with n = 2 finishes both answers', async () => {
    t.upstream.enqueue({ kind: 'raw', events: [{ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } }] });
    const stream = await t.client.chat.completions.create({ model: 'flash', messages, n: 2, stream: true });
    const finishes: [number, string | null][] = [];
    for await (const c of stream) for (const ch of c.choices) if (ch.finish_reason) finishes.push([ch.index, ch.finish_reason]);
    expect(finishes).toEqual([
      [0, 'content_filter'],
      [1, 'content_filter'],
    ]);
    expect(t.upstream.requests.at(-1)!.body.generationConfig).toMatchObject({ candidateCount: 2 });
  });

  it('a blocked prompt buffered with n = 2 answers both choices, as the stream does', async () => {
    t.upstream.enqueue({ kind: 'raw', response: { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 } } });
    const done = await t.client.chat.completions.create({ model: 'flash', messages, n: 2 });
    expect(done.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, '', 'content_filter'],
      [1, '', 'content_filter'],
    ]);
  });

  it('reasoning_effort goes as a thinking budget with includeThoughts, and the thoughts come back as reasoning_content, buffered and streamed', async () => {
    const thoughtful: GeminiReply = { kind: 'text', text: ['Sunny ', 'in Paris.'], thoughts: ['Paris is ', 'in France.'] };
    t.upstream.enqueue(thoughtful, thoughtful);
    const params = { model: 'flash', messages, reasoning_effort: 'medium' as const };
    const buffered = await t.client.chat.completions.create(params);
    const message = buffered.choices[0]!.message as typeof buffered.choices[0]['message'] & { reasoning_content?: string };
    expect(message.content).toBe('Sunny in Paris.');
    expect(message.reasoning_content).toBe('Paris is in France.');

    const stream = await t.client.chat.completions.create({ ...params, stream: true });
    const { out, chunks } = await assembleStream(stream);
    expect(out.content).toBe('Sunny in Paris.');
    const reasoning = chunks.map((c) => (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content).filter(Boolean);
    expect(reasoning).toEqual(['Paris is ', 'in France.']);

    for (const rec of t.upstream.requests.slice(-2)) {
      expect(rec.body).toMatchObject({ generationConfig: { thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } } });
    }
  });
});

/** The weather conversation's second turn: answered from the tool's result, which went to Gemini as a functionResponse after its call. */
function expectWeatherAnswered(done: { choices: { message: { content: string | null }; finish_reason: string | null }[] }, sent: unknown): void {
  expect(done.choices[0]!.message.content).toBe('It is 15 degrees in Paris.');
  expect(done.choices[0]!.finish_reason).toBe('stop');
  expect(sent).toEqual([
    { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris, FR' } }, thoughtSignature: expect.any(String) }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: '15 degrees' } } }] },
  ]);
}
