/**
 * The loopback Ollama server is only useful if it is faithful: the official
 * `ollama` SDK must read what it writes exactly as it reads a real Ollama.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ollama } from 'ollama';
import { startOllamaServer, type OllamaServer } from './ollama-server.js';

let server: OllamaServer;
let client: Ollama;

beforeAll(async () => {
  server = await startOllamaServer({ models: ['llama3.2', 'llava', 'all-minilm'] });
  client = new Ollama({ host: server.url });
});
afterAll(() => server.close());

describe('ollama loopback server, read by the official ollama SDK', () => {
  it('answers a buffered chat the SDK parses', async () => {
    server.enqueue({ kind: 'message', text: 'The sky is blue.', promptEvalCount: 21, evalCount: 5 });
    const res = await client.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'why is the sky blue?' }], stream: false });
    expect(res.message).toEqual({ role: 'assistant', content: 'The sky is blue.' });
    expect(res.done).toBe(true);
    expect(res.done_reason).toBe('stop');
    expect(res.prompt_eval_count).toBe(21);
    expect(res.eval_count).toBe(5);
    const req = server.requests.at(-1)!;
    expect(req.path).toBe('/api/chat');
    expect(req.body).toMatchObject({ model: 'llama3.2', stream: false });
  });

  it('streams NDJSON the SDK iterates until done', async () => {
    server.enqueue({ kind: 'message', text: 'Rayleigh scattering, mostly.' });
    const stream = await client.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'why?' }], stream: true });
    let text = '';
    let last: { done: boolean; done_reason: string; eval_count: number } | undefined;
    for await (const part of stream) {
      text += part.message.content;
      last = part;
    }
    expect(text).toBe('Rayleigh scattering, mostly.');
    expect(last).toMatchObject({ done: true, done_reason: 'stop', eval_count: 3 });
  });

  it('answers tool calls with object arguments, buffered and streamed', async () => {
    const toolCalls = [{ name: 'get_current_weather', arguments: { location: 'Paris, FR', format: 'celsius' } }];
    const tools = [{ type: 'function', function: { name: 'get_current_weather', parameters: { type: 'object' } } }];
    server.enqueue({ kind: 'message', toolCalls });
    const res = await client.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'weather?' }], tools, stream: false });
    expect(res.message.tool_calls).toEqual([{ function: { index: 0, ...toolCalls[0] } }]);

    server.enqueue({ kind: 'message', toolCalls: [{ id: 'call_abc', ...toolCalls[0]! }] });
    const stream = await client.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'weather?' }], tools, stream: true });
    const seen: unknown[] = [];
    for await (const part of stream) if (part.message.tool_calls) seen.push(...part.message.tool_calls);
    expect(seen).toEqual([{ id: 'call_abc', function: { index: 0, ...toolCalls[0] } }]);
  });

  it('records base64 images as sent', async () => {
    await client.chat({ model: 'llava', messages: [{ role: 'user', content: 'what is this?', images: ['aGVsbG8='] }], stream: false });
    expect(server.requests.at(-1)!.body).toMatchObject({ messages: [{ role: 'user', content: 'what is this?', images: ['aGVsbG8='] }] });
  });

  it('embeds input the SDK parses', async () => {
    const res = await client.embed({ model: 'all-minilm', input: ['why is the sky blue?', 'why is grass green?'] });
    expect(res.embeddings).toHaveLength(2);
    expect(res.prompt_eval_count).toBe(4);
    expect(server.requests.at(-1)!.path).toBe('/api/embed');
  });

  it('answers an unknown model with 404 and Ollama error body', async () => {
    const err = await client.chat({ model: 'nope', messages: [{ role: 'user', content: 'hi' }], stream: false }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ResponseError', status_code: 404, error: 'model "nope" not found, try pulling it first' });
  });

  it('answers a scripted error status and body', async () => {
    server.enqueue({ kind: 'error', status: 503, error: 'server busy, please try again.  maximum pending requests exceeded' });
    const err = await client.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: false }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status_code: 503, error: 'server busy, please try again.  maximum pending requests exceeded' });
  });

  it('cuts a stream after N lines: the SDK never sees done', async () => {
    server.enqueue({ kind: 'message', text: 'one two three four', cutAfter: 2 });
    const stream = await client.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const err = await (async () => {
      for await (const part of stream) text += part.message.content;
    })().catch((e: unknown) => e);
    expect(text).toBe('one two ');
    expect(err).toBeInstanceOf(Error);
  });

  it('speaks thinking as the SDK reads it: message.thinking buffered, thinking pieces streamed, none when told not to think', async () => {
    const reply = { kind: 'message' as const, thinking: 'Light scatters.', text: 'Rayleigh scattering.' };
    server.enqueue(reply, reply, reply);
    const messages = [{ role: 'user', content: 'why is the sky blue?' }];
    const res = await client.chat({ model: 'llama3.2', messages, think: true, stream: false });
    expect(res.message).toEqual({ role: 'assistant', content: 'Rayleigh scattering.', thinking: 'Light scatters.' });
    expect(server.requests.at(-1)!.body).toMatchObject({ think: true });

    const stream = await client.chat({ model: 'llama3.2', messages, think: 'high', stream: true });
    let thinking = '';
    let text = '';
    for await (const part of stream) {
      thinking += part.message.thinking ?? '';
      text += part.message.content;
    }
    expect(thinking).toBe('Light scatters.');
    expect(text).toBe('Rayleigh scattering.');

    const off = await client.chat({ model: 'llama3.2', messages, think: false, stream: false });
    expect(off.message).toEqual({ role: 'assistant', content: 'Rayleigh scattering.' });
  });

  it('refuses think for a model without thinking, and a think value it does not know, as Ollama does', async () => {
    const strict = await startOllamaServer({ noThinking: ['gemma3'] });
    try {
      const sdk = new Ollama({ host: strict.url });
      const messages = [{ role: 'user', content: 'hi' }];
      const err = await sdk.chat({ model: 'gemma3', messages, think: true, stream: false }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'ResponseError', status_code: 400, error: '"gemma3" does not support thinking' });
      // Not asked to think, it answers.
      await expect(sdk.chat({ model: 'gemma3', messages, stream: false })).resolves.toMatchObject({ done: true });
      await expect(sdk.chat({ model: 'gemma3', messages, think: false, stream: false })).resolves.toMatchObject({ done: true });
      const bad = await sdk.chat({ model: 'llama3.2', messages, think: 'max' as never, stream: false }).catch((e: unknown) => e);
      expect(bad).toMatchObject({ status_code: 400 });
    } finally {
      await strict.close();
    }
  });
});

