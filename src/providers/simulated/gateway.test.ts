/**
 * End to end over loopback: a real gateway whose only provider is `simulated`
 * (as in the demo config) answers `n` > 1 as OpenAI does, buffered and
 * streamed, and such a stream completes rather than reading as cut.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../../test/helpers/gateway.js';
import { sseData } from '../../../test/server/wire.js';
import type { ChatCompletion, ChatCompletionChunk } from '../../protocol/openai.js';

// Unpaced in effect: no latency, a piece a millisecond.
const SIM = { latencyMs: 0, ttftMs: 0, tokensPerSecond: 1000 };

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({
    providers: [
      { id: 'sim', type: 'simulated', simulate: SIM },
      { id: 'cutting', type: 'simulated', simulate: { ...SIM, faults: [{ kind: 'stream_abort', afterChunks: 3 }] } },
    ],
    models: [
      { name: 'local', deployments: [{ provider: 'sim', model: 'sim-1' }] },
      { name: 'cut', deployments: [{ provider: 'cutting', model: 'sim-1' }] },
    ],
  });
});
afterAll(() => gw.close(0));

const post = (body: Record<string, unknown>, requestId?: string) =>
  fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(requestId === undefined ? {} : { 'x-request-id': requestId }) },
    body: JSON.stringify({ model: 'local', messages: [{ role: 'user', content: 'Hello?' }], ...body }),
  });

async function traceOf(requestId: string) {
  await expect.poll(() => gw.observability.traces.query({ limit: 20 }).find((t) => t.id === requestId)).toBeDefined();
  return gw.observability.traces.query({ limit: 20 }).find((t) => t.id === requestId)!;
}

describe('simulated provider through the gateway, n = 2', () => {
  it('buffered: two choices, indexes 0 and 1, different texts, completions counted together', async () => {
    const r = await post({ n: 2 });
    expect(r.status).toBe(200);
    const res = (await r.json()) as ChatCompletion;
    expect(res.choices.map((c) => [c.index, c.finish_reason])).toEqual([
      [0, 'stop'],
      [1, 'stop'],
    ]);
    const [a, b] = res.choices.map((c) => c.message.content!);
    expect(a).not.toBe(b);
    const words = (a!.match(/\S+/g)?.length ?? 0) + (b!.match(/\S+/g)?.length ?? 0);
    expect(res.usage!.completion_tokens).toBe(words);
  });

  it('streamed: each choice finishes, [DONE] follows the usage chunk, no error event, the trace says completed', async () => {
    const r = await post({ n: 2, stream: true, stream_options: { include_usage: true } }, 'sim-n2-stream');
    expect(r.status).toBe(200);
    const data = sseData(await r.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as ChatCompletionChunk & { error?: unknown });
    expect(chunks.filter((c) => c.error !== undefined)).toEqual([]);

    const text = ['', ''];
    const finished: number[] = [];
    for (const c of chunks) {
      for (const ch of c.choices) {
        text[ch.index] += ch.delta.content ?? '';
        if (ch.finish_reason) finished.push(ch.index);
      }
    }
    expect(finished.sort()).toEqual([0, 1]);
    expect(text[0]).not.toBe(text[1]);
    expect(text.every((t) => t.length > 0)).toBe(true);
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage!.completion_tokens).toBe(text.join(' ').match(/\S+/g)!.length);

    const trace = await traceOf('sim-n2-stream');
    expect(trace).toMatchObject({ status: 200, streamOutcome: 'completed' });
    expect(trace.attempts.map((a) => a.errorType)).toEqual([null]);
  });

  it('a stream_abort fault still cuts it: the client gets stream_broken (several choices are not resumed)', async () => {
    const r = await post({ model: 'cut', n: 2, stream: true }, 'sim-n2-cut');
    expect(r.status).toBe(200);
    const data = sseData(await r.text());
    expect(data).not.toContain('[DONE]');
    const contents = data.slice(0, -1).map((d) => JSON.parse(d) as ChatCompletionChunk).filter((c) => c.choices[0]?.delta.content);
    expect(contents.map((c) => c.choices[0]!.index)).toEqual([0, 1, 0]);
    expect(JSON.parse(data.at(-1)!)).toMatchObject({ error: { code: 'stream_broken' } });
    expect(await traceOf('sim-n2-cut')).toMatchObject({ streamOutcome: 'broken' });
  });
});

describe('simulated provider through the gateway, JSON response_format', () => {
  it('answers JSON a client can parse, buffered and streamed', async () => {
    const response_format = {
      type: 'json_schema',
      json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { answer: { type: 'string' }, confidence: { type: 'number' } }, required: ['answer', 'confidence'], additionalProperties: false } },
    };
    const buffered = (await (await post({ response_format })).json()) as ChatCompletion;
    expect(Object.keys(JSON.parse(buffered.choices[0]!.message.content!))).toEqual(['answer', 'confidence']);

    const r = await post({ response_format: { type: 'json_object' }, stream: true });
    const text = sseData(await r.text())
      .filter((d) => d.startsWith('{'))
      .map((d) => (JSON.parse(d) as ChatCompletionChunk).choices[0]?.delta.content ?? '')
      .join('');
    expect(JSON.parse(text)).toEqual({ reply: expect.stringContaining('simulated reply') });
  });
});
