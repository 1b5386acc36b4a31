/**
 * Answers in a provider's native format that are not what the format promises,
 * over real sockets: a `null` where an object belongs (found by a socket-level
 * fuzz), a field of the wrong type, a stream that goes on after its finish, an
 * answer that names no model or carries no answer at all. Each is converted
 * without what is not the answer, or fails the attempt — never a 500 from the
 * gateway's own code, never an empty 200.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { startRawUpstream } from '../helpers/raw-upstream.js';
import { sseData } from './wire.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

type NativeType = 'anthropic' | 'cohere' | 'ollama' | 'gemini';

/** A gateway in front of one `type` provider whose every answer is `answer` (200; JSON, or `contentType` text as given). */
async function gatewayBefore(type: NativeType, answer: unknown, contentType = 'application/json'): Promise<string> {
  const upstream = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': contentType });
    res.end(typeof answer === 'string' ? answer : JSON.stringify(answer));
  });
  closers.push(() => upstream.close());
  const gw = await startGateway(
    {
      resilience: { maxRetries: 0 },
      providers: [{ id: 'up', type, baseUrl: new URL(upstream.url).origin, ...(type === 'ollama' ? {} : { apiKey: '${UP_KEY}' }) }],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm', capabilities: ['tools', 'embeddings'] }] }],
    },
    { env: { UP_KEY: 'k' } },
  );
  closers.push(() => gw.close(0));
  return gw.baseURL;
}

async function post(base: string, path: string, body: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The client's reply to a plain chat request. */
async function askThrough(type: NativeType, answer: unknown): Promise<{ status: number; body: Record<string, any> }> {
  return post(await gatewayBefore(type, answer), '/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
}

type Chunk = { id: string; model: string; choices: { delta?: { content?: string; tool_calls?: { function: { name?: unknown; arguments?: unknown } }[] }; finish_reason: string | null }[] };

/** A streamed chat request through a gateway before `type` answering `sse`: the status, the body, and its chunks. */
async function streamThrough(type: NativeType, sse: string, extra: Record<string, unknown> = {}): Promise<{ status: number; text: string; chunks: Chunk[] }> {
  const base = await gatewayBefore(type, sse, 'text/event-stream');
  const res = await fetch(`${base}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
  const text = await res.text();
  return { status: res.status, text, chunks: sseData(text).filter((d) => d.startsWith('{')).map((d) => JSON.parse(d) as Chunk) };
}

describe('native answers with a null inside', () => {
  it('anthropic: a null content block is skipped', async () => {
    const r = await askThrough('anthropic', {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'Hello' }, null, { type: 'text', text: ' there' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 3, output_tokens: 2 },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.content).toBe('Hello there');
  });

  it('cohere: a null content part and a null tool call are skipped', async () => {
    const r = await askThrough('cohere', {
      id: 'co_1',
      message: { role: 'assistant', content: [null, { type: 'text', text: 'Hi' }], tool_calls: [null] },
      finish_reason: 'COMPLETE',
      usage: { billed_units: { input_tokens: 3, output_tokens: 1 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.content).toBe('Hi');
    expect(r.body.choices[0].message.tool_calls).toBeUndefined();
  });

  it('ollama: a tool call that is null or names no function is no call', async () => {
    const r = await askThrough('ollama', {
      model: 'm',
      created_at: '2026-11-30T00:00:00Z',
      message: { role: 'assistant', content: 'No tools needed.', tool_calls: [null, { function: null }, 5] },
      done: true,
      done_reason: 'stop',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.content).toBe('No tools needed.');
    expect(r.body.choices[0].message.tool_calls).toBeUndefined();
    expect(r.body.choices[0].finish_reason).toBe('stop');
  });

  for (const [type, answer] of [
    ['cohere', { id: 'e', embeddings: { float: [null] }, meta: { billed_units: { input_tokens: 1 } } }],
    ['ollama', { model: 'm', embeddings: [null] }],
  ] as const) {
    it(`${type} embeddings: a vector that is not numbers is the upstream failing (fail-over, 503 here), not a 500`, async () => {
      const base = await gatewayBefore(type, answer);
      for (const encoding_format of ['float', 'base64']) {
        const r = await post(base, '/embeddings', { model: 'chat', input: 'a', encoding_format });
        expect(r.status, JSON.stringify(r.body)).toBe(503);
        expect(r.body.error.code).toBe('all_candidates_unavailable');
      }
    });
  }

  it('anthropic stream: a tool call whose block ends without input JSON has arguments {}', async () => {
    const events = [
      { type: 'message_start', message: { id: 'msg_t', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, output_tokens: 0 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'now', input: {} } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ];
    const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
    const base = await gatewayBefore('anthropic', sse, 'text/event-stream');
    const res = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'chat',
        stream: true,
        messages: [{ role: 'user', content: 'time?' }],
        tools: [{ type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }],
      }),
    });
    expect(res.status).toBe(200);
    let args = '';
    let name = '';
    for (const line of (await res.text()).split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const call = JSON.parse(line.slice(6)).choices?.[0]?.delta?.tool_calls?.[0];
      if (call?.function?.name) name += call.function.name;
      if (call?.function?.arguments) args += call.function.arguments;
    }
    expect(name).toBe('now');
    expect(JSON.parse(args)).toEqual({});
  });
});

describe('native streams with a field of the wrong type', () => {
  it('cohere: a tool call whose name or arguments are not strings reaches the client as strings, as the buffered answer does', async () => {
    const ev = (type: string, rest: Record<string, unknown> = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...rest })}\n\n`;
    const sse =
      ev('message-start', { id: 'co_1', delta: { message: { role: 'assistant' } } }) +
      ev('tool-call-start', { index: 0, delta: { message: { tool_calls: { id: 't1', type: 'function', function: { name: 5, arguments: { city: 'Paris' } } } } } }) +
      ev('tool-call-start', { index: 1, delta: { message: { tool_calls: { id: 't2', type: 'function', function: { name: 'now', arguments: '' } } } } }) +
      ev('tool-call-delta', { index: 1, delta: { message: { tool_calls: { function: { arguments: '{}' } } } } }) +
      ev('message-end', { delta: { finish_reason: 'TOOL_CALL', usage: { billed_units: { input_tokens: 3, output_tokens: 4 } } } }) +
      'data: [DONE]\n\n';
    const r = await streamThrough('cohere', sse, { tools: [{ type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }] });
    expect(r.status).toBe(200);
    const fns = r.chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).map((call) => call.function);
    // A client SDK appends each delta's arguments to a string: an object there breaks it.
    for (const fn of fns) {
      if (fn.name !== undefined) expect(typeof fn.name).toBe('string');
      expect(typeof fn.arguments).toBe('string');
    }
    expect(fns).toContainEqual({ name: 'now', arguments: '' });
    expect(fns).toContainEqual({ arguments: '{}' });
  });
});

describe('anthropic tool calls whose id or name is not a string', () => {
  // Found by the upstream fuzz: String() of an array nested some thousands deep overflowed the stack (a 500).
  const deepArray = '['.repeat(20_000) + ']'.repeat(20_000);
  /** JSON text of `v` with the string "DEEP" replaced by the deep array (JSON.stringify could not write it). */
  const withDeep = (v: unknown) => JSON.stringify(v).replace('"DEEP"', deepArray);

  it('buffered: the call reaches the client with id and name as strings (empty), not a 500', async () => {
    const r = await askThrough(
      'anthropic',
      withDeep({
        id: 'msg_d',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'tool_use', id: 'DEEP', name: { a: 1 }, input: { city: 'Paris' } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 3, output_tokens: 2 },
      }),
    );
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.choices[0].message.tool_calls).toEqual([{ id: '', type: 'function', function: { name: '', arguments: '{"city":"Paris"}' } }]);
  });

  it('streamed: likewise', async () => {
    const events = [
      { type: 'message_start', message: { id: 'msg_d', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, output_tokens: 0 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'DEEP', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
      { type: 'message_stop' },
    ];
    const r = await streamThrough('anthropic', events.map((e) => `event: ${e.type}\ndata: ${withDeep(e)}\n\n`).join(''));
    expect(r.status).toBe(200);
    expect(sseData(r.text).at(-1), r.text.slice(-300)).toBe('[DONE]');
    const calls = r.chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ id: 'toolu_1', function: { name: '' } });
  });
});

describe('native streams that go on after their finish', () => {
  it('anthropic: text sent after the message_delta that carried the stop_reason is not the answer', async () => {
    const events = [
      { type: 'message_start', message: { id: 'msg_3', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 3, output_tokens: 0 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' and more' } },
      { type: 'message_stop' },
    ];
    const r = await streamThrough('anthropic', events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''));
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('and more');
    expect(r.text).toContain('"content":"Hi"');
    expect(r.text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('gemini: text a candidate sends after its finishReason is not the answer: the client reads one answer, finished once', async () => {
    const ev = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`;
    const sse =
      ev({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP', index: 0 }], modelVersion: 'm' }) +
      ev({ candidates: [{ content: { role: 'model', parts: [{ text: ' and more' }] }, finishReason: 'MAX_TOKENS', index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4 } });
    const { status, chunks } = await streamThrough('gemini', sse);
    expect(status).toBe(200);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hi');
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null)).toEqual(['stop']);
  });
});

/**
 * The contract: `model` in the response and in every chunk names the concrete model that
 * served. An Anthropic-format server that names none (a proxy in front of Claude, a
 * message_start without `model`, or none at all) is answered under the deployment's model,
 * as the Gemini, Cohere and Ollama adapters do — not with `model` missing or empty.
 */
describe('anthropic answers that name no model', () => {
  it('buffered: the response names the deployment\'s model', async () => {
    const r = await askThrough('anthropic', { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 1 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.model).toBe('m');
    expect(r.body.choices[0].message.content).toBe('Hi');
  });

  for (const [label, start] of [
    ['a message_start without model', [{ type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 3, output_tokens: 0 } } }]],
    ['no message_start at all', []],
  ] as const) {
    it(`stream, ${label}: every chunk names the deployment's model`, async () => {
      const events = [
        ...start,
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
        { type: 'message_stop' },
      ];
      const { status, chunks } = await streamThrough('anthropic', events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''), { stream_options: { include_usage: true } });
      expect(status).toBe(200);
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hi');
      expect(new Set(chunks.map((c) => c.model))).toEqual(new Set(['m']));
      expect(chunks.every((c) => c.id.length > 0)).toBe(true);
    });
  }
});

/**
 * A 200 whose JSON carries no answer at all — an error object sent with status 200 (as
 * Gemini does inside a stream), or a body without the candidates / message the format
 * requires — is the upstream failing, as the OpenAI path treats a 200 without `choices`:
 * the request fails over (503 here, with one candidate), never an empty 200 answer.
 */
describe('native 200 answers that carry no answer', () => {
  for (const [label, type, answer, category] of [
    ['gemini: an error object', 'gemini', { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } }, 'rate_limited'],
    ['gemini: an error object wrapped in an array, as its streams send it', 'gemini', [{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }], 'overloaded'],
    ['gemini: no candidates and no prompt feedback', 'gemini', { usageMetadata: { promptTokenCount: 3 }, modelVersion: 'm' }, 'server'],
    ['gemini: candidates that are not a list', 'gemini', { candidates: { text: 'Hi' } }, 'server'],
    ['gemini: no candidates, and prompt feedback that blocked nothing', 'gemini', { promptFeedback: { safetyRatings: [] }, usageMetadata: { promptTokenCount: 3 } }, 'server'],
    ['ollama: a message that is not an object', 'ollama', { model: 'm', message: 'Hi', done: true, done_reason: 'stop' }, 'server'],
  ] as const) {
    it(`${label} fails the attempt (${category}), not a 200 with empty content`, async () => {
      const r = await askThrough(type, answer);
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.body.error.code).toBe('all_candidates_unavailable');
      expect(r.body.error.message).toContain(`up/m: ${category}`);
    });
  }

  it('gemini: a blocked prompt (no candidates, prompt feedback) is still an answer: content_filter', async () => {
    const r = await askThrough('gemini', { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3, totalTokenCount: 3 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].finish_reason).toBe('content_filter');
  });
});
