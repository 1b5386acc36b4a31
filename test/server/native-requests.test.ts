/**
 * Odd but valid OpenAI requests, as a native provider (Anthropic, Gemini,
 * Cohere, Ollama) gets them: over a real gateway and the loopback servers that
 * speak each provider's wire format. What the provider can express is sent in
 * its terms; what it cannot is refused before anything is sent, as a 400 whose
 * `param` names the field, so a client can point at what to change.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleStream } from '../helpers/assemble-stream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startAnthropicServer, type AnthropicServer } from '../servers/anthropic-server.js';
import { startCohereServer, type CohereServer } from '../servers/cohere-server.js';
import { startGeminiServer, type GeminiServer } from '../servers/gemini-server.js';
import { startOllamaServer, type OllamaServer } from '../servers/ollama-server.js';

let anthropic: AnthropicServer;
let gemini: GeminiServer;
let cohere: CohereServer;
let ollama: OllamaServer;
let gw: TestGateway;

beforeAll(async () => {
  [anthropic, gemini, cohere, ollama] = await Promise.all([startAnthropicServer(), startGeminiServer(), startCohereServer(), startOllamaServer()]);
  gw = await startGateway(
    {
      providers: [
        { id: 'an', type: 'anthropic', baseUrl: anthropic.url, apiKey: '${K}' },
        { id: 'ge', type: 'gemini', baseUrl: gemini.url, apiKey: '${K}' },
        { id: 'co', type: 'cohere', baseUrl: cohere.url, apiKey: '${K}' },
        { id: 'ol', type: 'ollama', baseUrl: ollama.url },
      ],
      models: [
        { name: 'anthropic', deployments: [{ provider: 'an', model: 'claude-sonnet-4-5' }] },
        { name: 'gemini', deployments: [{ provider: 'ge', model: 'gemini-2.5-flash' }] },
        { name: 'cohere', deployments: [{ provider: 'co', model: 'command-a-03-2025' }] },
        { name: 'ollama', deployments: [{ provider: 'ol', model: 'llama3.2' }] },
        { name: 'cohere-embed', deployments: [{ provider: 'co', model: 'embed-v4.0' }] },
        { name: 'ollama-embed', deployments: [{ provider: 'ol', model: 'nomic-embed-text' }] },
      ],
    },
    { env: { K: 'k' } },
  );
});
afterAll(async () => {
  await gw.close(0);
  await Promise.all([anthropic.close(), gemini.close(), cohere.close(), ollama.close()]);
});

const upstreams = () => ({ anthropic, gemini, cohere, ollama, 'cohere-embed': cohere, 'ollama-embed': ollama });
type Alias = keyof ReturnType<typeof upstreams>;

/** POSTs `body` to `route` for `model`; the answer's status and error, and how many requests its upstream got. */
async function refusal(route: 'chat/completions' | 'embeddings', model: Alias, body: Record<string, unknown>) {
  const upstream = upstreams()[model];
  const before = upstream.requests.length;
  const res = await fetch(`${gw.baseURL}/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, ...body }) });
  const { error } = (await res.json()) as { error: { code: string; param: string | null; message: string } };
  return { status: res.status, code: error.code, param: error.param, sent: upstream.requests.length - before };
}

describe('a native provider refuses what it cannot express, naming the field', () => {
  it.each<Alias>(['anthropic', 'gemini', 'cohere', 'ollama'])('%s: a file part by id names the part', async (model) => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Summarise this.' }, { type: 'file', file: { file_id: 'file-abc123' } }] },
    ];
    expect(await refusal('chat/completions', model, { messages })).toEqual({ status: 400, code: 'invalid_request', param: 'messages[1].content[1]', sent: 0 });
  });

  it.each<Alias>(['cohere-embed', 'ollama-embed'])('%s: token ids name the input', async (model) => {
    expect(await refusal('embeddings', model, { input: [[1, 2, 3]] })).toEqual({ status: 400, code: 'invalid_request', param: 'input', sent: 0 });
  });

  it('ollama: tool-call arguments that are no JSON object name the arguments', async () => {
    const messages = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '["Paris"]' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ];
    expect(await refusal('chat/completions', 'ollama', { messages })).toEqual({ status: 400, code: 'invalid_request', param: 'messages[1].tool_calls[0].function.arguments', sent: 0 });
  });

  // Strings are leaves to the body's depth bound: nested JSON inside one, parsed by the adapter,
  // overflowed the stack when its request was serialised (a 500 internal_error, buffered or streamed).
  const deep = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
  it.each<Alias>(['anthropic', 'gemini', 'ollama'])('%s: tool-call arguments nested past the body bound name the arguments', async (model) => {
    const messages = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: deep } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ];
    const param = 'messages[1].tool_calls[0].function.arguments';
    expect(await refusal('chat/completions', model, { messages })).toEqual({ status: 400, code: 'invalid_request', param, sent: 0 });
    expect(await refusal('chat/completions', model, { messages, stream: true })).toEqual({ status: 400, code: 'invalid_request', param, sent: 0 });
  });

  it('gemini: a tool result nested past the body bound names the result', async () => {
    const messages = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: deep },
    ];
    expect(await refusal('chat/completions', 'gemini', { messages })).toEqual({ status: 400, code: 'invalid_request', param: 'messages[2].content', sent: 0 });
  });

  // Consecutive user messages merge into one turn: the second's parts were appended with a
  // spread, which overflowed the stack past about 120,000 of them (a 500 internal_error).
  it.each<Alias>(['anthropic', 'gemini'])('%s: a message of 140,000 text parts after another of its role is sent whole', async (model) => {
    const parts = Array.from({ length: 140_000 }, () => ({ type: 'text', text: 'a' }));
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Read these.' }, { role: 'user', content: parts }] }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  });

  it('anthropic: messages with no text at all name the messages', async () => {
    expect(await refusal('chat/completions', 'anthropic', { messages: [{ role: 'user', content: ' ' }] })).toEqual({ status: 400, code: 'invalid_request', param: 'messages', sent: 0 });
  });
});

/** The stop sequences each provider's request carried, read from its own wire format. */
const sentStops: Record<'anthropic' | 'gemini' | 'cohere' | 'ollama', () => unknown> = {
  anthropic: () => anthropic.requests.at(-1)!.body!.stop_sequences,
  gemini: () => (gemini.requests.at(-1)!.body as { generationConfig?: { stopSequences?: unknown } }).generationConfig?.stopSequences,
  cohere: () => (cohere.requests.at(-1)!.body as { stop_sequences?: unknown }).stop_sequences,
  ollama: () => (ollama.requests.at(-1)!.body as { options?: { stop?: unknown } }).options?.stop,
};

describe('stop sequences', () => {
  const chat = (model: string, stop: unknown) =>
    fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, stop, messages: [{ role: 'user', content: 'Count to ten.' }] }) });

  // Ollama's runner matches an empty stop sequence at once: the answer would be empty.
  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: an empty one is left out, not sent', async (model) => {
    expect((await chat(model, ['', 'END'])).status).toBe(200);
    expect(sentStops[model]()).toEqual(['END']);
    expect((await chat(model, '')).status).toBe(200);
    expect(sentStops[model]()).toBeUndefined();
  });

  it.each(['gemini', 'cohere'] as const)('%s: more than the 5 it takes are refused, naming stop', async (model) => {
    expect(await refusal('chat/completions', model, { stop: ['1', '2', '3', '4', '5', '6'], messages: [{ role: 'user', content: 'Count.' }] })).toEqual({ status: 400, code: 'invalid_request', param: 'stop', sent: 0 });
    expect((await chat(model, ['1', '2', '3', '4', '5'])).status).toBe(200);
    expect(sentStops[model]()).toEqual(['1', '2', '3', '4', '5']);
  });
});

describe('tool_choice without tools', () => {
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];

  // Left unsaid, the provider answered in text where the client required a call.
  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: a required or named call is refused, naming tool_choice', async (model) => {
    for (const toolChoice of ['required', { type: 'function', function: { name: 'weather' } }]) {
      expect(await refusal('chat/completions', model, { messages, tool_choice: toolChoice, tools: [] })).toEqual({ status: 400, code: 'invalid_request', param: 'tool_choice', sent: 0 });
      expect(await refusal('chat/completions', model, { messages, tool_choice: toolChoice })).toEqual({ status: 400, code: 'invalid_request', param: 'tool_choice', sent: 0 });
    }
  });

  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: none and auto mean what no tools mean', async (model) => {
    for (const toolChoice of ['none', 'auto']) {
      const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages, tool_choice: toolChoice }) });
      expect(res.status).toBe(200);
    }
  });
});

describe('response_format', () => {
  // Cohere got the string as its json_schema, Gemini dropped it for plain JSON mode, Anthropic inlined it as the schema.
  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: a json_schema whose schema is no object is refused, naming it', async (model) => {
    const response_format = { type: 'json_schema', json_schema: { name: 'answer', schema: 'object' } };
    expect(await refusal('chat/completions', model, { response_format, messages: [{ role: 'user', content: 'Answer in JSON.' }] })).toEqual({
      status: 400,
      code: 'invalid_request',
      param: 'response_format.json_schema.schema',
      sent: 0,
    });
  });
});

describe('tool results', () => {
  // Anthropic refuses a tool_result no tool_use before it has the id of (Gemini's adapter refused it already).
  it.each(['anthropic', 'gemini'] as const)('%s: one answering no call before it is refused, naming its tool_call_id', async (model) => {
    const messages = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_2', content: 'sunny' },
    ];
    expect(await refusal('chat/completions', model, { messages })).toEqual({ status: 400, code: 'invalid_request', param: 'messages[2].tool_call_id', sent: 0 });
  });
});

describe('legacy functions', () => {
  // Validation takes a null function result, as OpenAI does: each adapter must send it as no text.
  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: a legacy function result with null content in the history is served', async (model) => {
    const messages = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, function_call: { name: 'weather', arguments: '{"city":"Paris"}' } },
      { role: 'function', name: 'weather', content: null },
    ];
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages }) });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  const functions = [
    { name: 'weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    { name: 'time' },
  ];
  const ask = [{ role: 'user', content: 'Weather in Paris?' }];
  const post = (model: string, body: Record<string, unknown>) =>
    fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: ask, functions, ...body }) });

  /** The tools and tool choice each provider's last request carried, in its own wire format. */
  const sentTools: Record<'anthropic' | 'gemini' | 'cohere' | 'ollama', () => unknown> = {
    anthropic: () => pick(anthropic.requests.at(-1)!.body, 'tools', 'tool_choice'),
    gemini: () => pick(gemini.requests.at(-1)!.body as Record<string, unknown>, 'tools', 'toolConfig'),
    cohere: () => pick(cohere.requests.at(-1)!.body as Record<string, unknown>, 'tools', 'tool_choice'),
    ollama: () => pick(ollama.requests.at(-1)!.body as Record<string, unknown>, 'tools'),
  };
  const names = (tools: unknown): string[] =>
    (tools as Record<string, unknown>[]).map((t) => String(t.name ?? (t.function as { name: string }).name));

  // They were refused (400 naming functions): an alias of native deployments answered older clients with an error.
  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: functions go out as tools, and a named function_call forces that one', async (model) => {
    expect((await post(model, {})).status).toBe(200);
    const offered = sentTools[model]() as { tools: unknown };
    expect(model === 'gemini' ? names((offered.tools as { functionDeclarations: unknown }[])[0]!.functionDeclarations) : names(offered.tools)).toEqual(['weather', 'time']);

    expect((await post(model, { function_call: { name: 'weather' } })).status).toBe(200);
    const forced = sentTools[model]() as Record<string, unknown>;
    const expected = {
      // One call, as a legacy answer carries: Anthropic is the provider with a switch for it.
      anthropic: { tool_choice: { type: 'tool', name: 'weather', disable_parallel_tool_use: true } },
      gemini: { toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } } },
      // Neither can name one: offered only it (Cohere also requires a call).
      cohere: { tool_choice: 'REQUIRED' },
      ollama: {},
    }[model];
    expect(forced).toMatchObject(expected);
    if (model === 'cohere' || model === 'ollama') expect(names(forced.tools)).toEqual(['weather']);
  });

  it('anthropic: function_call auto and none are its tool choices, one call asked for', async () => {
    expect((await post('anthropic', {})).status).toBe(200);
    expect(anthropic.requests.at(-1)!.body!.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect((await post('anthropic', { function_call: 'auto' })).status).toBe(200);
    expect(anthropic.requests.at(-1)!.body!.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect((await post('anthropic', { function_call: 'none' })).status).toBe(200);
    expect(anthropic.requests.at(-1)!.body!.tool_choice).toEqual({ type: 'none' });
  });

  /** Each provider's answer with two calls, the second of which a legacy client cannot read. */
  const twoCalls = {
    anthropic: () => anthropic.enqueue({ toolUses: [{ name: 'weather', input: { city: 'Paris' } }, { name: 'time', input: {} }], chunkSize: 4 }),
    gemini: () => gemini.enqueue({ kind: 'function_call', calls: [{ name: 'weather', args: { city: 'Paris' } }, { name: 'time', args: {} }] }),
    cohere: () => cohere.enqueue({ kind: 'message', toolCalls: [{ id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' }, { id: 'c2', name: 'time', arguments: '{}' }] }),
    ollama: () => ollama.enqueue({ kind: 'message', toolCalls: [{ name: 'weather', arguments: { city: 'Paris' } }, { name: 'time', arguments: {} }] }),
  };

  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: the answer is one function_call, buffered and streamed', async (model) => {
    twoCalls[model]();
    twoCalls[model]();
    const res = await post(model, {});
    const answer = (await res.json()) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
    expect(answer.choices[0]!.finish_reason).toBe('function_call');
    const { function_call: call, tool_calls: calls } = answer.choices[0]!.message as { function_call: { name: string; arguments: string }; tool_calls?: unknown };
    expect(calls).toBeUndefined();
    expect([call.name, JSON.parse(call.arguments)]).toEqual(['weather', { city: 'Paris' }]);

    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather in Paris?' }], functions, stream: true });
    const { out, chunks } = await assembleStream(stream);
    expect(out.finish_reason).toBe('function_call');
    expect(out.tool_calls).toBeUndefined();
    expect(out.function_call!.name).toBe('weather');
    expect(JSON.parse(out.function_call!.arguments)).toEqual({ city: 'Paris' });
    // The name once, on the first piece, as OpenAI streams it.
    expect(chunks.filter((c) => c.choices[0]?.delta.function_call?.name !== undefined)).toHaveLength(1);
  });

  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: functions beside tools are refused, as OpenAI refuses them, naming functions', async (model) => {
    const tools = [{ type: 'function', function: { name: 'news' } }];
    expect(await refusal('chat/completions', model, { functions, tools, messages: ask })).toEqual({ status: 400, code: 'invalid_request', param: 'functions', sent: 0 });
    expect(await refusal('chat/completions', model, { functions, function_call: { name: 'news' }, messages: ask })).toEqual({ status: 400, code: 'invalid_request', param: 'function_call', sent: 0 });
  });
});

/** The named fields of a request body that it has. */
function pick(body: Record<string, unknown> | undefined, ...keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (body?.[k] !== undefined) out[k] = body[k];
  return out;
}

describe('what a native answer cannot carry', () => {
  const messages = [{ role: 'user', content: 'Say hi.' }];
  // Answered before with logprobs: null and a text reply: not what the client asked for.
  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: logprobs and audio output are refused, naming the field', async (model) => {
    expect(await refusal('chat/completions', model, { messages, logprobs: true, top_logprobs: 2 })).toEqual({ status: 400, code: 'invalid_request', param: 'logprobs', sent: 0 });
    expect(await refusal('chat/completions', model, { messages, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } })).toEqual({ status: 400, code: 'invalid_request', param: 'modalities', sent: 0 });
  });

  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: logprobs false and text modalities are served', async (model) => {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages, logprobs: false, modalities: ['text'] }) });
    expect(res.status).toBe(200);
  });
});

describe('parts where only text can go', () => {
  const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
  const call = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'chart', arguments: '{}' } }] };

  // They were dropped: the model answered without the image the client sent.
  it.each(['gemini', 'cohere', 'ollama'] as const)('%s: an image in a tool result is refused, naming the part', async (model) => {
    const messages = [{ role: 'user', content: 'Draw the chart.' }, call, { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'Here:' }, image] }];
    expect(await refusal('chat/completions', model, { messages })).toEqual({ status: 400, code: 'invalid_request', param: 'messages[2].content[1]', sent: 0 });
  });

  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: an image in a system message is refused, naming the part', async (model) => {
    const messages = [{ role: 'system', content: [{ type: 'text', text: 'Logo:' }, image] }, { role: 'user', content: 'Describe the logo.' }];
    expect(await refusal('chat/completions', model, { messages })).toEqual({ status: 400, code: 'invalid_request', param: 'messages[0].content[1]', sent: 0 });
  });

  it.each(['anthropic', 'gemini', 'cohere', 'ollama'] as const)('%s: an assistant refusal part is history, served', async (model) => {
    const messages = [{ role: 'user', content: 'a' }, { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] }, { role: 'user', content: 'b' }];
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages }) });
    expect(res.status).toBe(200);
  });

  // The PDF was dropped: only text and images were kept of a tool result.
  it('anthropic: an image or a PDF in a tool result goes with it', async () => {
    const pdf = { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'chart.pdf' } };
    const messages = [{ role: 'user', content: 'Draw the chart.' }, call, { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'Here:' }, image, pdf] }];
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'anthropic', messages }) });
    expect(res.status).toBe(200);
    const sent = anthropic.requests.at(-1)!.body!.messages as { content: { type: string; content?: { type: string }[] }[] }[];
    expect(sent[2]!.content[0]!.content!.map((b) => b.type)).toEqual(['text', 'image', 'document']);
  });
});
