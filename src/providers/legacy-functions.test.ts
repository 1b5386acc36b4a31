import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../protocol/openai.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import { AnthropicChunkStream } from './anthropic/stream.js';
import { FunctionCallStream, legacyAsTools, servingLegacyFunctions, toFunctionCallAnswer, toFunctionCallChunk } from './legacy-functions.js';
import { nativeChoice, nativeChunk, roleDelta } from './native-chunk.js';
import type { AttemptContext, ChatResult, ChunkStream, ProviderAdapter } from './types.js';

const weather = { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
const time = { name: 'get_time' };
const req = (extra: Partial<ChatRequest>): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: 'Weather in Paris?' }], ...extra });

function refusal(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamError);
    return err as UpstreamError;
  }
  throw new Error('expected a refusal');
}

describe('legacyAsTools', () => {
  it('offers the functions as function tools, one call asked for', () => {
    const out = legacyAsTools(req({ functions: [weather, time], temperature: 0.2 }))!;
    expect(out.tools).toEqual([
      { type: 'function', function: weather },
      { type: 'function', function: time },
    ]);
    expect(out.tool_choice).toBeUndefined();
    expect(out.parallel_tool_calls).toBe(false);
    expect(out.functions).toBeUndefined();
    expect(out.temperature).toBe(0.2);
  });

  it.each([
    ['none', 'none'],
    ['auto', 'auto'],
    [{ name: 'get_time' }, { type: 'function', function: { name: 'get_time' } }],
  ] as const)('function_call %j is tool_choice %j', (call, choice) => {
    const out = legacyAsTools(req({ functions: [weather, time], function_call: call }))!;
    expect(out.tool_choice).toEqual(choice);
    expect(out.function_call).toBeUndefined();
  });

  it('a request without functions is served as it is', () => {
    expect(legacyAsTools(req({}))).toBeUndefined();
    expect(legacyAsTools(req({ functions: [], function_call: 'auto' }))).toBeUndefined();
    expect(legacyAsTools(req({ functions: null, function_call: 'none' }))).toBeUndefined();
  });

  it.each<[string, Partial<ChatRequest>, string]>([
    // OpenAI: "'functions' and 'tools' cannot both be provided".
    ['functions beside tools', { functions: [weather], tools: [{ type: 'function', function: time }] }, 'functions'],
    ['tool_choice beside functions', { functions: [weather], tool_choice: 'required' }, 'tool_choice'],
    ['a function_call naming no function offered', { functions: [weather], function_call: { name: 'get_time' } }, 'function_call'],
    ['a named function_call without functions', { function_call: { name: 'get_weather' } }, 'function_call'],
    // OpenAI: "'function_call' is only allowed when 'functions' are specified".
    ['function_call beside tools', { tools: [{ type: 'function', function: time }], function_call: 'none' }, 'function_call'],
  ])('%s is refused before sending, naming %s', (_name, extra, param) => {
    expect(refusal(() => legacyAsTools(req(extra)))).toMatchObject({ category: 'invalid_request', param, unsent: true });
  });
});

describe('toFunctionCallAnswer', () => {
  const answer = (message: ChatCompletion['choices'][number]['message'], finish: 'tool_calls' | 'stop'): ChatCompletion => ({
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
  });

  it('the first call is the function_call; later ones are dropped', () => {
    const res = toFunctionCallAnswer(
      answer(
        {
          role: 'assistant',
          content: 'Checking.',
          refusal: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'c2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
    );
    expect(res.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Checking.', refusal: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      finish_reason: 'function_call',
      logprobs: null,
    });
    expect('tool_calls' in res.choices[0]!.message).toBe(false);
  });

  it('a text answer stays as it is', () => {
    const res = toFunctionCallAnswer(answer({ role: 'assistant', content: 'Sunny.', refusal: null }, 'stop'));
    expect(res.choices[0]!.message).toEqual({ role: 'assistant', content: 'Sunny.', refusal: null });
    expect(res.choices[0]!.finish_reason).toBe('stop');
  });
});

describe('toFunctionCallChunk', () => {
  const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: 'tool_calls' | null = null, index = 0) =>
    nativeChunk('id', 1, 'm', [nativeChoice(index, delta, finish)]);

  it('the first call streams as function_call pieces; the second is dropped, chunks that only carried it too', () => {
    const chunks = [
      chunk(roleDelta()),
      chunk({ content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'c2', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      nativeChunk('id', 1, 'm', [], { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }),
    ];
    const first: number[] = [];
    const out = chunks.filter((c) => toFunctionCallChunk(c, first));
    expect(out.map((c) => c.choices[0] && { delta: c.choices[0].delta, finish_reason: c.choices[0].finish_reason })).toEqual([
      { delta: roleDelta(), finish_reason: null },
      { delta: { content: 'Checking.' }, finish_reason: null },
      { delta: { function_call: { name: 'get_weather', arguments: '' } }, finish_reason: null },
      { delta: { function_call: { arguments: '{"city":' } }, finish_reason: null },
      { delta: { function_call: { arguments: '"Paris"}' } }, finish_reason: null },
      { delta: {}, finish_reason: 'function_call' },
      undefined,
    ]);
    expect(out.at(-1)!.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('whole calls in one delta (Gemini sends them so): the first one, name and arguments together', () => {
    const c = chunk({
      tool_calls: [
        { index: 0, id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { index: 1, id: 'c2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    });
    expect(toFunctionCallChunk(c, [])).toBe(true);
    expect(c.choices[0]!.delta).toEqual({ function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
  });

  it('each choice keeps its own first call', () => {
    const first: number[] = [];
    const a = chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{}' } }] }, null, 0);
    const b = chunk({ tool_calls: [{ index: 0, function: { name: 'get_time', arguments: '{}' } }] }, null, 1);
    expect([toFunctionCallChunk(a, first), toFunctionCallChunk(b, first)]).toEqual([true, true]);
    expect(b.choices[0]!.delta).toEqual({ function_call: { name: 'get_time', arguments: '{}' } });
  });
});

describe('FunctionCallStream over a recorded Anthropic stream', () => {
  async function* once(text: string): AsyncGenerator<string> {
    yield text;
  }

  it('the OpenAI SDK assembles one function_call and finish_reason function_call', async () => {
    const { sse } = JSON.parse(readFileSync(new URL('./anthropic/fixtures/stream-tool-use.json', import.meta.url), 'utf8')) as { sse: string };
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of new FunctionCallStream(new AnthropicChunkStream({}, once(sse), 1))) chunks.push(c);
    expect(chunks.some((c) => c.choices[0]?.delta.tool_calls !== undefined)).toBe(false);
    const lines = chunks.map((c) => JSON.stringify(c) + '\n').join('');
    const assembled = await ChatCompletionStream.fromReadableStream(new Response(lines).body!).finalChatCompletion();
    const choice = assembled.choices[0]!;
    expect(choice.message.function_call).toEqual({ name: 'get_weather', arguments: '{"location": "Paris"}' });
    expect(choice.message.tool_calls ?? []).toEqual([]);
    expect(choice.message.content).toBe("I'll check the current weather in Paris for you.");
    expect(choice.finish_reason).toBe('function_call');
  });
});

describe('servingLegacyFunctions', () => {
  const ctx = {} as AttemptContext;
  const result = (): ChatResult => ({
    headers: {},
    response: {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] } }],
    },
  });
  const fake = () => {
    const seen: ChatRequest[] = [];
    const inner: ProviderAdapter = {
      provider: { id: 'p' } as ProviderAdapter['provider'],
      chat: async (r) => (seen.push(r), result()),
      chatStream: async (r) => (seen.push(r), { headers: {}, malformed: 0, async *[Symbol.asyncIterator]() {} }) as ChunkStream,
      close: async () => {},
    };
    return { seen, inner };
  };

  it('a request without functions reaches the adapter as it came, and its answer is left alone', async () => {
    const { seen, inner } = fake();
    const a = servingLegacyFunctions(inner);
    const plain = req({});
    const res = await a.chat(plain, ctx);
    expect(seen[0]).toBe(plain);
    expect(res.response.choices[0]!.finish_reason).toBe('tool_calls');
    expect(await a.chatStream(plain, ctx)).not.toBeInstanceOf(FunctionCallStream);
  });

  it('a legacy request reaches it as tools, and its answer comes back as a function_call', async () => {
    const { seen, inner } = fake();
    const a = servingLegacyFunctions(inner);
    const res = await a.chat(req({ functions: [weather] }), ctx);
    expect(seen[0]!.tools).toEqual([{ type: 'function', function: weather }]);
    expect(res.response.choices[0]).toMatchObject({ finish_reason: 'function_call', message: { function_call: { name: 'get_weather', arguments: '{}' } } });
    expect(await a.chatStream(req({ functions: [weather] }), ctx)).toBeInstanceOf(FunctionCallStream);
  });

  it('a refusal is a rejected promise, not a throw', async () => {
    const a = servingLegacyFunctions(fake().inner);
    const p = a.chat(req({ functions: [weather], tools: [{ type: 'function', function: time }] }), ctx);
    await expect(p).rejects.toMatchObject({ category: 'invalid_request', param: 'functions' });
  });

  it('embeddings stay absent where the adapter has none, and present where it has', () => {
    const { inner } = fake();
    expect(servingLegacyFunctions(inner).embeddings).toBeUndefined();
    const withEmbed = servingLegacyFunctions({ ...inner, embeddingBatch: 96, embeddings: async () => ({ headers: {}, response: { object: 'list', data: [], model: 'm', usage: { prompt_tokens: 0, total_tokens: 0 } } }) });
    expect(withEmbed.embeddings).toBeTypeOf('function');
    expect(withEmbed.embeddingBatch).toBe(96);
  });

  it('adaptTo reaches the adapter it wraps (Ollama learns a refused think there), and stays absent where it has none', () => {
    const { inner } = fake();
    expect(servingLegacyFunctions(inner).adaptTo).toBeUndefined();
    const asked: string[] = [];
    const learning = servingLegacyFunctions({ ...inner, adaptTo: (_err, model) => (asked.push(model), true) });
    expect(learning.adaptTo?.(new UpstreamError({ category: 'invalid_request', message: 'x' }), 'qwen3')).toBe(true);
    expect(asked).toEqual(['qwen3']);
  });
});

