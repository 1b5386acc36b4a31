/**
 * A committed stream is bounded by its stall timer alone, so the timer measures time since
 * the last chunk that moved the answer on, not since any chunk: an upstream that keeps
 * sending chunks with nothing in them (`delta: {}`, `delta: {"content": ""}`) stalls as a
 * silent one does. Over real sockets: a raw OpenAI-format upstream scripted chunk by chunk,
 * the gateway on a virtual clock, the official `openai` client. Each empty chunk is written
 * only once the client has read the one before: the gateway had taken it then, so the clock
 * moves after the chunk was seen, never before.
 */
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { closeAfterEach, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

const IDLE_MS = 300;
const STEP_MS = 100;

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream], () => (gw = upstream = undefined));

/**
 * One chunk as OpenAI writes them: the same id, created and model on each, so after the
 * first content chunk the gateway builds the rest from its template (chunk-template.ts)
 * without parsing them, an empty text among them.
 */
const event = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]}\n\n`;

/** The gateway on a virtual clock over an upstream that opens an answer ("Hello") and then writes what the test says. */
async function start(): Promise<{ clock: VirtualClock; write: (s: string) => void; end: (s: string) => void; stream: AsyncIterator<OpenAI.ChatCompletionChunk>; requestId: string }> {
  let res: ServerResponse | undefined;
  upstream = await startRawUpstream((r) => {
    res = r;
    sseHead(r);
    r.write(event({ role: 'assistant', content: '' }) + event({ content: 'Hello' }));
  });
  const clock = new VirtualClock();
  gw = await startChatOver(upstream.url, { resilience: { idleTimeoutMs: IDLE_MS, maxRetries: 0, streamResume: false } }, {}, { clock });
  const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
  const { data, response } = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  const stream = data[Symbol.asyncIterator]();
  expect((await stream.next()).value?.choices[0]?.delta.role).toBe('assistant');
  expect((await stream.next()).value?.choices[0]?.delta.content).toBe('Hello');
  const write = (s: string): void => {
    if (!res!.destroyed) res!.write(s);
  };
  return { clock, write, end: (s) => res!.end(s), stream, requestId: response.headers.get('x-request-id')! };
}

/**
 * Writes `chunk` and reads it, then moves the clock on by STEP_MS, until the stream fails
 * or `steps` are done; returns the steps that went through and the failure, if any.
 */
async function feed(s: Awaited<ReturnType<typeof start>>, chunk: string, steps: number): Promise<{ through: number; error: unknown }> {
  for (let i = 0; i < steps; i++) {
    s.write(chunk);
    try {
      const r = await s.stream.next();
      if (r.done) return { through: i, error: new Error('the stream ended') };
    } catch (error) {
      return { through: i, error };
    }
    await s.clock.advance(STEP_MS);
  }
  return { through: steps, error: undefined };
}

describe('the stall timer counts from the last chunk that made progress', () => {
  it.each([
    ['an empty delta', {}],
    ['an empty text', { content: '' }],
    ['a role and an empty text', { role: 'assistant', content: '' }],
  ])('chunks carrying %s, one every 100 ms, do not keep a stream alive: it stalls idleTimeoutMs after the text', async (_, delta) => {
    const s = await start();
    const { through, error } = await feed(s, event(delta), 10);
    // Three empty chunks went through (forwarded as they came); at 300 ms the stall fired.
    expect(through).toBe(IDLE_MS / STEP_MS);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(String((error as Error).message)).toMatch(/stalled/);
    await expect.poll(() => gw!.observability.traces.get(s.requestId)).toBeDefined();
    const trace = gw!.observability.traces.get(s.requestId)!;
    expect(trace.streamOutcome).toBe('broken');
    expect(trace.attempts.map((a) => a.errorType)).toEqual(['timeout']);
  });

  it('text, reasoning and tool-call deltas each restart it: a stream of them outlives idleTimeoutMs many times over', async () => {
    const s = await start();
    expect(await feed(s, event({ content: ' world' }), 10)).toEqual({ through: 10, error: undefined });
    // Reasoning an OpenAI-compatible server streams beside the answer (DeepSeek's, vLLM's field; OpenRouter's).
    expect(await feed(s, event({ content: null, reasoning_content: 'thinking' }), 10)).toEqual({ through: 10, error: undefined });
    expect(await feed(s, event({ reasoning: 'still thinking' }), 10)).toEqual({ through: 10, error: undefined });
    expect(await feed(s, event({ refusal: 'no' }), 10)).toEqual({ through: 10, error: undefined });
    s.write(event({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }));
    await s.stream.next();
    expect(await feed(s, event({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }), 10)).toEqual({ through: 10, error: undefined });
    s.end(event({}, 'stop') + 'data: [DONE]\n\n');
    expect((await s.stream.next()).value?.choices[0]?.finish_reason).toBe('stop');
    expect((await s.stream.next()).done).toBe(true);
  });

  it('empty chunks between pieces of text do not end a live stream: the timer restarts at each piece', async () => {
    const s = await start();
    for (let i = 0; i < 5; i++) {
      // An empty chunk 100 ms after the text, the next text 100 ms later: 1 s in all.
      expect(await feed(s, event({}), 1)).toEqual({ through: 1, error: undefined });
      expect(await feed(s, event({ content: 'x' }), 1)).toEqual({ through: 1, error: undefined });
    }
    const { through, error } = await feed(s, event({ content: '' }), 10);
    // The last text came 100 ms ago: two more empty chunks, then the stall.
    expect(through).toBe(2);
    expect(String((error as Error).message)).toMatch(/stalled/);
  });
});
