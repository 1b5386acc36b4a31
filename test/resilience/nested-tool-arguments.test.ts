/**
 * Tool arguments nested deeper than JSON.stringify can recurse, from a native
 * upstream (Ollama here; Gemini and Anthropic go through the same conversion):
 * the upstream's malformed answer, so the request fails over to the next
 * candidate, buffered and streamed — not a 500 internal error.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { toolArgumentsJson } from '../../src/providers/tool-arguments.js';
import { UpstreamError } from '../../src/resilience/upstream-error.js';
import { startGateway } from '../helpers/gateway.js';
import { chunk, completionText, sseHead, startRawUpstream, usageChunk } from '../helpers/raw-upstream.js';

const DEPTH = 200_000;
/** `{"a":{"a":…1…}}`, written out by hand: building it with JSON.stringify would overflow too. */
const nested = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

it('toolArgumentsJson: an overflow is the upstream\'s malformed answer (server); ordinary values are JSON', () => {
  expect(toolArgumentsJson({ city: 'Lyon' })).toBe('{"city":"Lyon"}');
  const deep = JSON.parse(nested) as unknown;
  let err: unknown;
  try {
    toolArgumentsJson(deep);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(UpstreamError);
  expect(err).toMatchObject({ category: 'server' });
});

describe('an Ollama answer whose tool arguments are nested too deeply', () => {
  it('fails over to the next candidate, buffered and streamed', async () => {
    const ollama = await startRawUpstream((res, hit) => {
      const call = `{"function":{"name":"f","arguments":${nested}}}`;
      const message = `{"role":"assistant","content":"","tool_calls":[${call}]}`;
      const tail = '"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":2';
      if (hit.body.stream === true) {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        res.end(`{"model":"m","created_at":"2026-12-01T00:00:00Z","message":${message},${tail}}\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"model":"m","created_at":"2026-12-01T00:00:00Z","message":${message},${tail}}`);
      }
    });
    closers.push(() => ollama.close());
    const backup = await startRawUpstream((res, hit) => {
      if (hit.body.stream === true) {
        sseHead(res);
        res.write(chunk('b-model', { role: 'assistant', content: 'from the backup' }));
        res.write(chunk('b-model', {}, 'stop'));
        res.write(usageChunk('b-model', 3, 3));
        return void res.end('data: [DONE]\n\n');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completionText('b-model', 'from the backup', 3, 3));
    });
    closers.push(() => backup.close());
    const gw = await startGateway({
      resilience: { maxRetries: 0 },
      providers: [
        { id: 'local', type: 'ollama', baseUrl: ollama.url.replace(/\/v1$/, '') },
        { id: 'cloud', type: 'openai', baseUrl: backup.url },
      ],
      models: [{ name: 'chat', deployments: [{ provider: 'local', model: 'm' }], fallbacks: ['backup'] }, { name: 'backup', deployments: [{ provider: 'cloud', model: 'b-model' }] }],
    });
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });

    const { data, response } = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe('from the backup');
    const trace = gw.observability.traces.get(response.headers.get('x-request-id')!)!;
    expect(trace.attempts.map((a) => [a.provider, a.errorType])).toEqual([
      ['local', 'server'],
      ['cloud', null],
    ]);

    const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('from the backup');
    expect(ollama.hits).toHaveLength(2);
  });
});
