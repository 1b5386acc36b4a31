/**
 * A streamed tool call whose upstream reports no usage: the usage the gateway
 * counts for it (the client's include_usage chunk, the trace, cost and tpm)
 * includes the generated call, not only text content.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream } from '../helpers/raw-upstream.js';
import { traceOf } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

const ARGS = '{"city":"Paris","unit":"celsius","days":7,"details":["wind","rain","humidity"]}';

describe('usage of a streamed tool call counted by the gateway', () => {
  it('counts the call name and arguments when the upstream sends no usage', async () => {
    const upstream = await startRawUpstream((res) => {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
      res.write(chunk('m', { tool_calls: [{ index: 0, function: { arguments: ARGS.slice(0, 20) } }] }));
      res.write(chunk('m', { tool_calls: [{ index: 0, function: { arguments: ARGS.slice(20) } }] }));
      res.write(chunk('m', {}, 'tool_calls'));
      res.end('data: [DONE]\n\n');
    });
    closers.push(() => upstream.close());
    const gw = await startChatOver(upstream.url);
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'chat',
        stream: true,
        stream_options: { include_usage: true },
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
        messages: [{ role: 'user', content: 'weather?' }],
      })
      .withResponse();
    let usage: OpenAI.CompletionUsage | undefined;
    let args = '';
    for await (const c of stream) {
      args += c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      if (c.usage) usage = c.usage;
    }
    expect(args).toBe(ARGS);
    const expected = Math.ceil(('get_weather'.length + ARGS.length) / 4);
    expect(usage?.completion_tokens).toBe(expected);
    const t = await traceOf(gw, response.headers.get('x-request-id'));
    expect(t.usage.completionTokens).toBe(expected);
  });
});
