/**
 * Proves the loopback Gemini server faithful: the official @google/genai SDK,
 * pointed at it, parses every answer (buffered, SSE stream, function call,
 * embeddings) and raises its own ApiError for error statuses — so tests of our
 * adapter against this server say something about the real API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, GoogleGenAI, ThinkingLevel, Type } from '@google/genai';
import { startGeminiServer, type GeminiServer } from './gemini-server.js';

const KEY = 'test-key-123';
let server: GeminiServer;
let ai: GoogleGenAI;

beforeAll(async () => {
  server = await startGeminiServer({ apiKey: KEY });
  ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: server.url } });
});
afterAll(() => server.close());

describe('gemini loopback server, driven by @google/genai', () => {
  it('answers generateContent in the wire format the SDK parses', async () => {
    server.enqueue({ kind: 'text', text: 'Paris is the capital.', usage: { promptTokenCount: 12, candidatesTokenCount: 5 } });
    const res = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'What is the capital of France?',
      config: { systemInstruction: 'Answer in one sentence.', temperature: 0.2, maxOutputTokens: 50 },
    });
    expect(res.text).toBe('Paris is the capital.');
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 17 });
    expect(res.modelVersion).toBe('gemini-2.5-flash');

    const seen = server.requests.at(-1)!;
    expect(seen.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(seen.headers['x-goog-api-key']).toBe(KEY);
    expect(seen.body).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'What is the capital of France?' }] }],
      systemInstruction: { parts: [{ text: 'Answer in one sentence.' }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 50 },
    });
  });

  it('streams generateContentStream as SSE events the SDK reassembles', async () => {
    server.enqueue({ kind: 'text', text: ['Once ', 'upon ', 'a time.'] });
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Tell a story' });
    const texts: string[] = [];
    const finish: (string | undefined)[] = [];
    let usage: number | undefined;
    for await (const chunk of stream) {
      texts.push(chunk.text ?? '');
      finish.push(chunk.candidates?.[0]?.finishReason);
      usage = chunk.usageMetadata?.candidatesTokenCount ?? usage;
    }
    expect(texts).toEqual(['Once ', 'upon ', 'a time.']);
    expect(finish).toEqual([undefined, undefined, 'STOP']);
    expect(usage).toBeGreaterThan(0);
    const seen = server.requests.at(-1)!;
    expect(seen.action).toBe('streamGenerateContent');
    expect(seen.query.alt).toBe('sse');
  });

  it('returns function calls the SDK exposes as functionCalls', async () => {
    server.enqueue({ kind: 'function_call', calls: [{ name: 'get_weather', args: { city: 'Oslo' } }] });
    const res = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Weather in Oslo?',
      config: {
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'Current weather',
                parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
              },
            ],
          },
        ],
      },
    });
    expect(res.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'Oslo' } }]);
    expect(server.requests.at(-1)!.body).toMatchObject({
      tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { properties: { city: { type: 'STRING' } } } }] }],
    });
  });

  it('streams a function call as a complete part in the final event', async () => {
    server.enqueue({ kind: 'function_call', text: 'Checking. ', calls: [{ name: 'lookup', args: { q: 'x' } }] });
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'Look it up' });
    const calls: unknown[] = [];
    for await (const chunk of stream) calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([{ name: 'lookup', args: { q: 'x' } }]);
  });

  it('serves embedContent (the SDK calls batchEmbedContents)', async () => {
    const res = await ai.models.embedContent({
      model: 'text-embedding-004',
      contents: ['first text', 'second text'],
      config: { outputDimensionality: 4, taskType: 'RETRIEVAL_QUERY' },
    });
    expect(res.embeddings).toHaveLength(2);
    expect(res.embeddings![0]!.values).toHaveLength(4);
    expect(res.embeddings![0]!.values).not.toEqual(res.embeddings![1]!.values);
    const seen = server.requests.at(-1)!;
    expect(seen.url).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    // The SDK's own wire names, which the Gemini adapter sends too (taskType: the client's input_type).
    expect(seen.body).toMatchObject({ requests: [{ model: 'models/text-embedding-004', outputDimensionality: 4, taskType: 'RETRIEVAL_QUERY' }, {}] });
  });

  it('turns a scripted error status into the SDK ApiError with Google’s body', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      body: {
        error: {
          code: 429,
          message: 'You exceeded your current quota.',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }],
        },
      },
    });
    const err = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect((err as ApiError).message).toContain('RESOURCE_EXHAUSTED');
  });

  it('rejects a wrong API key the way Google does (400 API_KEY_INVALID)', async () => {
    const wrong = new GoogleGenAI({ apiKey: 'nope', httpOptions: { baseUrl: server.url } });
    const err = await wrong.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }).catch((e: unknown) => e);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toContain('API_KEY_INVALID');
  });

  it('a cut stream makes the SDK fail instead of ending quietly', async () => {
    server.enqueue({ kind: 'cut', text: ['partial ', 'answer'] });
    const stream = await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' });
    const texts: string[] = [];
    const err = await (async () => {
      for await (const chunk of stream) texts.push(chunk.text ?? '');
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(texts).toEqual(['partial ', 'answer']);
  });

  it('ends candidates without content the way the SDK reads them (a MALFORMED_FUNCTION_CALL), buffered and streamed', async () => {
    server.enqueue({ kind: 'no_content', finishReason: 'MALFORMED_FUNCTION_CALL' }, { kind: 'no_content', finishReason: 'MALFORMED_FUNCTION_CALL' });
    const res = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi', config: { candidateCount: 2 } });
    expect(res.candidates?.map((c) => [c.index, c.finishReason, c.content])).toEqual([
      [0, 'MALFORMED_FUNCTION_CALL', undefined],
      [1, 'MALFORMED_FUNCTION_CALL', undefined],
    ]);
    expect(res.usageMetadata?.candidatesTokenCount).toBeUndefined();
    const finishes: (string | undefined)[] = [];
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' })) {
      finishes.push(chunk.candidates?.[0]?.finishReason);
    }
    expect(finishes).toEqual(['MALFORMED_FUNCTION_CALL']);
  });

  it('rejects what the real API rejects: unknown schema keys and a bad role', async () => {
    // The SDK strips additionalProperties itself, so send the raw request an adapter might.
    const res = await fetch(`${server.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false } }] }],
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        code: 400,
        message: `Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.`,
        status: 'INVALID_ARGUMENT',
      },
    });

    const badRole = await ai.models
      .generateContent({ model: 'gemini-2.5-flash', contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })
      .catch((e: unknown) => e);
    expect(badRole).toBeInstanceOf(ApiError);
    expect((badRole as ApiError).status).toBe(400);
    expect((badRole as ApiError).message).toContain('valid role');
  });

  it('sends thought summaries, as parts with thought: true, only when thinkingConfig asks for them; the SDK keeps them out of its text', async () => {
    const reply = { kind: 'text' as const, text: ['The answer ', 'is 4.'], thoughts: ['Adding two ', 'and two.'] };
    server.enqueue(reply, reply, reply);
    const config = { thinkingConfig: { includeThoughts: true, thinkingLevel: ThinkingLevel.LOW } };
    const res = await ai.models.generateContent({ model: 'gemini-3-flash-preview', contents: '2 + 2?', config });
    expect(res.text).toBe('The answer is 4.');
    expect(res.candidates?.[0]?.content?.parts?.[0]).toEqual({ text: 'Adding two and two.', thought: true });
    expect(server.requests.at(-1)!.body).toMatchObject({ generationConfig: { thinkingConfig: { includeThoughts: true, thinkingLevel: 'LOW' } } });

    const stream = await ai.models.generateContentStream({ model: 'gemini-3-flash-preview', contents: '2 + 2?', config });
    const thoughts: string[] = [];
    let text = '';
    for await (const chunk of stream) {
      for (const p of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (p.thought) thoughts.push(p.text ?? '');
        else text += p.text ?? '';
      }
    }
    expect(thoughts).toEqual(['Adding two ', 'and two.']);
    expect(text).toBe('The answer is 4.');

    // Not asked for: none come back.
    const plain = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: '2 + 2?', config: { thinkingConfig: { thinkingBudget: 1024 } } });
    expect(plain.candidates?.[0]?.content?.parts).toEqual([{ text: 'The answer is 4.' }]);
  });

  it('refuses the thinkingConfig the real API refuses', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['gemini-3-flash-preview', { thinkingLevel: ThinkingLevel.LOW, thinkingBudget: 1024 }, /Only one of/],
      ['gemini-2.5-flash', { thinkingLevel: ThinkingLevel.HIGH }, /not supported for this model/],
      ['gemini-3-pro-preview', { thinkingLevel: ThinkingLevel.MINIMAL }, /not supported for this model/],
      ['gemini-2.5-pro', { thinkingBudget: 0 }, /only works in thinking mode/],
      ['gemini-2.0-flash', { thinkingBudget: 1024 }, /Thinking is not supported/],
    ];
    for (const [model, thinkingConfig, message] of cases) {
      const err = await ai.models.generateContent({ model, contents: 'x', config: { thinkingConfig } }).catch((e: unknown) => e);
      expect(err, model).toBeInstanceOf(ApiError);
      expect((err as ApiError).status).toBe(400);
      expect((err as ApiError).message).toMatch(message);
    }
  });
});

