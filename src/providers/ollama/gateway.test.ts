/**
 * End to end: the official `openai` client, pointed at a real gateway whose
 * only provider is the loopback Ollama server, gets ordinary OpenAI answers,
 * buffered and streamed, tool calls and embeddings included.
 */
import { describe, expect, it } from 'vitest';
import { assembleStream } from '../../../test/helpers/assemble-stream.js';
import { expectReasoningBothWays, expectStreamedLyonCall, streamWithUsage } from '../../../test/helpers/client-turns.js';
import { openaiThroughGateway } from '../../../test/helpers/openai-through-gateway.js';
import { startOllamaServer } from '../../../test/servers/ollama-server.js';
import { createOllamaAdapter } from './index.js';

const MODEL = 'llama3.2';
const t = openaiThroughGateway({
  upstream: () => startOllamaServer({ models: [MODEL, 'all-minilm', 'gemma3'], noThinking: ['gemma3'] }),
  config: (url) => ({
    providers: [{ id: 'local', type: 'ollama', baseUrl: url }],
    models: [
      { name: 'chat', deployments: [{ provider: 'local', model: MODEL }] },
      { name: 'embed', deployments: [{ provider: 'local', model: 'all-minilm' }] },
      { name: 'plain', deployments: [{ provider: 'local', model: 'gemma3' }] },
    ],
  }),
  options: { adapters: { ollama: createOllamaAdapter } },
});

describe('openai client → gateway → ollama', () => {
  it('buffered completion', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'Hello there.', promptEvalCount: 9, evalCount: 2 });
    const res = await t.client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 });
    expect(res.model).toBe(MODEL);
    expect(res.choices[0]!.message.content).toBe('Hello there.');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 });
    expect(t.upstream.requests.at(-1)!.body).toMatchObject({ model: MODEL, stream: false, options: { num_predict: 20 } });
  });

  it('counts that are not counts (a negative) reach the client as the gateway counted them, buffered and streamed', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'Hello there.', promptEvalCount: -50, evalCount: 2 });
    const res = await t.client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage).toMatchObject({ completion_tokens: 2, total_tokens: res.usage!.prompt_tokens + 2 });

    t.upstream.enqueue({ kind: 'message', text: 'Hello there.', promptEvalCount: -50, evalCount: 2 });
    const stream = await t.client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    const { out } = await assembleStream(stream);
    expect(out.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(out.usage).toMatchObject({ completion_tokens: 2, total_tokens: out.usage!.prompt_tokens + 2 });
  });

  it('streamed completion with usage', async () => {
    t.upstream.enqueue({ kind: 'message', text: 'The sky is blue.', promptEvalCount: 7, evalCount: 4 });
    const { out, chunks } = await streamWithUsage(t.client, 'why?');
    for (const chunk of chunks) expect(chunk.model).toBe(MODEL);
    expect(out.content).toBe('The sky is blue.');
    expect(out.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
  });

  it('streamed tool call', async () => {
    t.upstream.enqueue({ kind: 'message', toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Lyon' } }] });
    await expectStreamedLyonCall(t.client, 'call_w1');
  });

  it('embeddings, in the base64 encoding the client asks for by default', async () => {
    t.upstream.enqueue({ kind: 'embed', vectors: [[0.5, -0.25, 1]], promptEvalCount: 2 });
    const res = await t.client.embeddings.create({ model: 'embed', input: 'hello' });
    expect(res.data[0]!.embedding).toEqual([0.5, -0.25, 1]);
  });

  it('reasoning_effort goes as think, and message.thinking comes back as reasoning_content, buffered and streamed', async () => {
    const reply = { kind: 'message' as const, thinking: 'Say hello back.', text: 'Hello there.' };
    t.upstream.enqueue(reply, reply);
    const params = { model: 'chat', messages: [{ role: 'user' as const, content: 'hi' }], reasoning_effort: 'low' as const };
    await expectReasoningBothWays(t.client, params, 'Hello there.', 'Say hello back.');
    for (const rec of t.upstream.requests.slice(-2)) expect(rec.body).toMatchObject({ think: true });
  });

  it('a model that refuses think is asked again at once without it, and from then on not asked with it', async () => {
    const before = t.upstream.requests.length;
    const params = { model: 'plain', messages: [{ role: 'user' as const, content: 'hi' }], reasoning_effort: 'high' as const };
    const { data, response } = await t.client.chat.completions.create(params).withResponse();
    expect(data.choices[0]!.message.content).toBe('Hello from Ollama.');
    expect(response.headers.get('x-switchyard-attempts')).toBe('2');
    const sent = t.upstream.requests.slice(before).map((r) => (r.body as { think?: unknown }).think);
    expect(sent).toEqual([true, undefined]);

    // Learnt: the next request, streamed, goes without think the first time.
    const stream = await t.client.chat.completions.create({ ...params, stream: true }).withResponse();
    const { out } = await assembleStream(stream.data);
    expect(out.content).toBe('Hello from Ollama.');
    expect(stream.response.headers.get('x-switchyard-attempts')).toBe('1');
    expect(t.upstream.requests.at(-1)!.body).not.toHaveProperty('think');
  });
});

