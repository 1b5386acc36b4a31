/**
 * A Gemini candidate that ends with no content for a reason that is no answer
 * (MALFORMED_FUNCTION_CALL, OTHER…) is a failed attempt. Over real loopback sockets: the
 * official `openai` client → the gateway → two loopback Gemini servers. Before the first
 * token the request fails over to the next candidate, buffered or streamed, where it used
 * to end as an empty `stop`; after it, the client keeps its text, ended `stop`.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGeminiServer, type GeminiServer } from '../servers/gemini-server.js';
import { startNativeFallbackPair, type TestGateway } from '../helpers/gateway.js';

let primary: GeminiServer;
let secondary: GeminiServer;
let gw: TestGateway;
let client: OpenAI;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ primary, secondary, gw, close } = await startNativeFallbackPair(startGeminiServer, 'gemini', { id: 'g1', model: 'gemini-2.5-flash' }, { id: 'g2', model: 'gemini-2.5-pro' }));
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'unused', maxRetries: 0 });
});

afterAll(() => close());

const messages = [{ role: 'user' as const, content: 'What is the weather in Paris?' }];

describe('gemini candidates that end without an answer', () => {
  it('buffered: fails over to the next candidate, the trace naming the reason', async () => {
    primary.enqueue({ kind: 'no_content', finishReason: 'MALFORMED_FUNCTION_CALL' });
    secondary.enqueue({ kind: 'text', text: 'Sunny, 24 degrees.' });
    const { data, response } = await client.chat.completions.create({ model: 'chat', messages }).withResponse();
    expect(response.headers.get('x-switchyard-deployment')).toBe('g2/gemini-2.5-pro');
    expect(response.headers.get('x-switchyard-fallback')).toBe('true');
    expect(data.choices[0]!.message.content).toBe('Sunny, 24 degrees.');
    const trace = gw.observability.traces.get(response.headers.get('x-request-id')!)!;
    expect(trace.attempts.map((a) => [a.provider, a.errorType])).toEqual([
      ['g1', 'server'],
      ['g2', null],
    ]);
    expect(trace.attempts[0]!.message).toContain('MALFORMED_FUNCTION_CALL');
  });

  it('streamed, before the first token: fails over, the client sees only the answer', async () => {
    primary.enqueue({ kind: 'no_content', finishReason: 'OTHER' });
    secondary.enqueue({ kind: 'text', text: ['Sunny, ', '24 degrees.'] });
    const { data: stream, response } = await client.chat.completions.create({ model: 'chat', messages, stream: true }).withResponse();
    let text = '';
    const finishes: (string | null)[] = [];
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.choices[0]?.finish_reason) finishes.push(c.choices[0].finish_reason);
    }
    expect(response.headers.get('x-switchyard-deployment')).toBe('g2/gemini-2.5-pro');
    expect(text).toBe('Sunny, 24 degrees.');
    expect(finishes).toEqual(['stop']);
  });

  it('with n = 2, fails over only when both candidates end so; one answer keeps the response', async () => {
    primary.enqueue({ kind: 'no_content', finishReason: 'UNEXPECTED_TOOL_CALL' });
    secondary.enqueue({ kind: 'text', text: 'Sunny.' });
    const failedOver = await client.chat.completions.create({ model: 'chat', messages, n: 2 }).withResponse();
    expect(failedOver.response.headers.get('x-switchyard-deployment')).toBe('g2/gemini-2.5-pro');
    expect(failedOver.data.choices.map((c) => c.message.content)).toEqual(['Sunny.', 'Sunny.']);

    primary.enqueue({
      kind: 'raw',
      response: {
        candidates: [
          { finishReason: 'MALFORMED_FUNCTION_CALL', index: 0 },
          { content: { role: 'model', parts: [{ text: 'Sunny.' }] }, finishReason: 'STOP', index: 1 },
        ],
        usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 },
        modelVersion: 'gemini-2.5-flash',
      },
    });
    const kept = await client.chat.completions.create({ model: 'chat', messages, n: 2 }).withResponse();
    expect(kept.response.headers.get('x-switchyard-deployment')).toBe('g1/gemini-2.5-flash');
    expect(kept.data.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, '', 'content_filter'],
      [1, 'Sunny.', 'stop'],
    ]);
  });
});

/**
 * With n > 1 one candidate may answer while a sibling ends empty: the response is kept, and
 * the empty choice says it has no answer (content_filter, map-finish-reason.ts) rather than
 * passing for an empty `stop`, buffered and streamed alike.
 */
describe('an empty sibling of a candidate that answered', () => {
  const answered = { content: { role: 'model', parts: [{ text: 'Sunny.' }] }, finishReason: 'STOP', index: 1 };
  const usageMetadata = { promptTokenCount: 9, candidatesTokenCount: 2, totalTokenCount: 11 };

  /** The choices the client reads, buffered and streamed, for an empty candidate 0 ended with `reason`. */
  async function choices(reason: string): Promise<{ buffered: [number, string | null, string | null][]; streamed: [number, string, string | null][] }> {
    const empty = { finishReason: reason, index: 0 };
    primary.enqueue({ kind: 'raw', response: { candidates: [empty, answered], usageMetadata, modelVersion: 'gemini-2.5-flash' } });
    const b = await client.chat.completions.create({ model: 'chat', messages, n: 2 }).withResponse();
    expect(b.response.headers.get('x-switchyard-deployment')).toBe('g1/gemini-2.5-flash');
    // Streamed: the answer first, its empty sibling's end after it (the other order: the last test).
    primary.enqueue({ kind: 'raw', events: [{ candidates: [answered], usageMetadata, modelVersion: 'gemini-2.5-flash' }, { candidates: [empty], usageMetadata }] });
    const s = await client.chat.completions.create({ model: 'chat', messages, n: 2, stream: true }).withResponse();
    expect(s.response.headers.get('x-switchyard-deployment')).toBe('g1/gemini-2.5-flash');
    const streamed = new Map<number, [number, string, string | null]>();
    for await (const c of s.data) {
      for (const ch of c.choices) {
        const got = streamed.get(ch.index) ?? [ch.index, '', null];
        got[1] += ch.delta.content ?? '';
        got[2] = ch.finish_reason ?? got[2];
        streamed.set(ch.index, got);
      }
    }
    return {
      buffered: b.data.choices.map((c) => [c.index, c.message.content, c.finish_reason]),
      streamed: [...streamed.values()].sort((x, y) => x[0] - y[0]),
    };
  }

  it.each([
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'content_filter'],
    ['OTHER', 'content_filter'],
    ['UNEXPECTED_TOOL_CALL', 'content_filter'],
    // Ends the client can use even when empty: as they are.
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
  ])('an empty %s sibling ends %s, buffered and streamed, beside the answer', async (reason, finish) => {
    const { buffered, streamed } = await choices(reason);
    expect(buffered).toEqual([
      [0, '', finish],
      [1, 'Sunny.', 'stop'],
    ]);
    expect(streamed).toEqual([
      [0, '', finish],
      [1, 'Sunny.', 'stop'],
    ]);
  });

  it('streamed, an empty sibling that ends before the answer comes is held, then ends content_filter', async () => {
    primary.enqueue({ kind: 'raw', events: [{ candidates: [{ finishReason: 'OTHER', index: 0 }] }, { candidates: [answered], usageMetadata, modelVersion: 'gemini-2.5-flash' }] });
    const finishes: [number, string][] = [];
    for await (const c of await client.chat.completions.create({ model: 'chat', messages, n: 2, stream: true })) {
      for (const ch of c.choices) if (ch.finish_reason) finishes.push([ch.index, ch.finish_reason]);
    }
    expect(finishes).toEqual([
      [0, 'content_filter'],
      [1, 'stop'],
    ]);
  });
});
