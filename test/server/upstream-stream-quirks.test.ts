/**
 * Upstream streams that are odd but not broken, over real sockets (each found
 * by a socket-level fuzz of the stream path): the client must get a valid SSE
 * stream with exactly the upstream's text, or, for a real cut, an error event
 * that says how much had arrived.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk, type RawHandler } from '../helpers/raw-upstream.js';
import { seenText } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** Every `data:` value the client received, in order (a value that is not one line of JSON fails here, as in an SDK). */
function dataValues(body: string): unknown[] {
  const out: unknown[] = [];
  for (const block of body.split('\n\n')) {
    if (block.trim() === '') continue;
    for (const line of block.split('\n')) {
      expect(line.startsWith('data: '), `a line without its data: field: ${JSON.stringify(line)}`).toBe(true);
      const v = line.slice(6);
      out.push(v === '[DONE]' ? v : JSON.parse(v));
    }
  }
  return out;
}

const contentOf = (values: unknown[]) =>
  values
    .map((v) => (v as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ?? '')
    .join('');

/**
 * The body the client of streamThrough has read so far: an upstream writes what comes after the
 * first token (or cuts) once the client has read it, so the gateway had committed by then —
 * after the first token for certain, not because a 2 ms pause usually splits the reads.
 */
let client = seenText();

async function streamThrough(
  handler: RawHandler,
  resilience: Record<string, unknown> = {},
  request: Record<string, unknown> = {},
): Promise<{ status: number; values: unknown[]; body: string }> {
  const upstream = await startRawUpstream(handler);
  closers.push(() => upstream.close());
  const gw = await startChatOver(upstream.url, { resilience: { maxRetries: 0, ...resilience } });
  closers.push(() => gw.close(0));
  // Before the request: the upstream's handler runs, and waits on it, before the response's head comes back.
  client = seenText();
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }], ...request }),
  });
  const text = await client.readAll(res);
  return { status: res.status, values: dataValues(text), body: text };
}


/**
 * A stream request through the one upstream at `url`, with timers far off: the attempt must fail
 * as the upstream's fault (`server`) on its own, the client getting the 503 that names it.
 */
async function expectRefusedAsServer(url: string): Promise<void> {
  const traces: { attempts: { errorType: string | null }[] }[] = [];
  const gw = await startChatOver(url, { resilience: { maxRetries: 0, ttftTimeoutMs: 60_000, requestTimeoutMs: 60_000 } });
  gw.gateway.bus.on('request', (t) => traces.push(t as never));
  closers.push(() => gw.close(0));
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status).toBe(503);
  expect(body.error.code).toBe('all_candidates_unavailable');
  expect(body.error.message).toContain('up/m: server');
  await expect.poll(() => traces.length).toBe(1);
  expect(traces[0]!.attempts[0]).toMatchObject({ errorType: 'server' });
}
describe('odd upstream streams', () => {
  it('an event whose JSON spans several data: lines reaches the client as one valid data: line', async () => {
    const r = await streamThrough(async (res) => {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content: '' }));
      // SSE joins the lines with \n: valid JSON (whitespace between tokens), but not one line.
      res.write('data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",\n');
      res.write('data: "choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}\n\n');
      for (const piece of [' wor', 'ld']) {
        res.write(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",\ndata: "choices":[{"index":0,"delta":{"content":"${piece}"},"finish_reason":null}]}\n\n`);
        await client.reached(`"${piece}"`);
      }
      res.write(chunk('m', {}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
    expect(r.status).toBe(200);
    expect(contentOf(r.values)).toBe('Hello world');
    expect(r.values.at(-1)).toBe('[DONE]');
  });

  it('an event over several data: lines is relayed as its own text, not re-serialised: a deeply nested member does not fail a healthy stream', async () => {
    // JSON.parse reads any depth; JSON.stringify recurses and overflows the stack a few thousand levels down.
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const r = await streamThrough(async (res) => {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content: 'Hello' }));
      res.write(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",\ndata: "choices":[{"index":0,"delta":{"content":" world","x":${deep}},"finish_reason":null}]}\n\n`);
      res.write(chunk('m', {}, 'stop'));
      res.end('data: [DONE]\n\n');
    });
    expect(r.status).toBe(200);
    expect(r.body).not.toContain('"error"');
    expect(contentOf(r.values)).toBe('Hello world');
    expect(r.values.at(-1)).toBe('[DONE]');
  });

  it('a chunk the gateway must rewrite (usage beside its choices) that cannot be serialised fails as the upstream\'s fault, never as the gateway\'s', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const r = await streamThrough(async (res) => {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content: 'Hello' }));
      res.end(
        `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"x":${deep}},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}\n\ndata: [DONE]\n\n`,
      );
    });
    expect(r.status).toBe(200);
    // Not [DONE] after an answer whose finish never reached the client, nor the gateway's own stream_error.
    expect(r.values).not.toContain('[DONE]');
    const last = r.values.at(-1) as { error?: { code?: string; message?: string } };
    expect(last.error?.code).toBe('stream_broken');
    expect(last.error?.message).toContain('server');
  });

  it('the first chunk\'s id, created and model are taken for the gateway\'s own usage chunk only when they are a string, a number, a string', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const r = await streamThrough(
      async (res) => {
        sseHead(res);
        res.write(`data: {"id":${deep},"object":"chat.completion.chunk","created":{"s":1},"model":${deep},"choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}\n\n`);
        res.end(chunk('m', {}, 'stop') + 'data: [DONE]\n\n'); // no usage: the gateway writes the usage chunk itself
      },
      {},
      { stream_options: { include_usage: true } },
    );
    expect(r.status).toBe(200);
    expect(r.body).not.toContain('"error"');
    expect(r.values.at(-1)).toBe('[DONE]');
    const usage = r.values.at(-2) as { id: unknown; created: unknown; model: unknown; usage: unknown };
    expect(usage.usage).toBeTruthy();
    expect(typeof usage.id).toBe('string');
    expect(typeof usage.created).toBe('number');
    expect(usage.model).toBe('m');
  });

  const ev = (choices: unknown) => `data: ${JSON.stringify({ id: 'c5', object: 'chat.completion.chunk', created: 1, model: 'm', choices })}\n\n`;
  for (const [label, before, after] of [
    ['whose choices hold a null', ev([null]), ev([null])],
    // An array is no choice, nor call, for the client to read (found by the upstream fuzz).
    ['whose choices hold an array, or whose tool_calls hold one', ev([[{ delta: { content: 'X' } }]]), ev([{ index: 0, delta: { tool_calls: [[{ index: 0 }]] }, finish_reason: null }])],
  ] as const) {
    it(`a chunk ${label} is skipped as malformed, before the first token and after it`, async () => {
      const r = await streamThrough(async (res) => {
        sseHead(res);
        res.write(chunk('m', { role: 'assistant', content: '' }));
        res.write(before);
        res.write(chunk('m', { content: 'Hi' }));
        await client.reached('"Hi"');
        res.write(after);
        res.write(chunk('m', { content: ' there' }));
        res.write(chunk('m', {}, 'stop'));
        res.end('data: [DONE]\n\n');
      });
      expect(r.status).toBe(200);
      expect(contentOf(r.values)).toBe('Hi there');
      expect(r.body).not.toContain('"error"');
      expect(r.body).not.toContain('[[');
      expect(r.values.at(-1)).toBe('[DONE]');
    });
  }

  it('a chunk whose model is no name (an array nested some thousands deep) does not break the usage chunk the gateway writes (found by the upstream fuzz)', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const r = await streamThrough(
      async (res) => {
        sseHead(res);
        res.write(chunk('m', { role: 'assistant', content: '' }));
        res.write(chunk('m', { content: 'Hi' }));
        res.write(chunk('m', {}, 'stop').replace('"model":"m"', `"model":${deep}`));
        res.end('data: [DONE]\n\n');
      },
      {},
      { stream_options: { include_usage: true } },
    );
    expect(r.status).toBe(200);
    expect(r.body).not.toContain('"error"');
    expect(contentOf(r.values)).toBe('Hi');
    expect((r.values.at(-2) as { model: unknown; usage: unknown }).model).toBe('m');
    expect(r.values.at(-1)).toBe('[DONE]');
  });

  it('a tool_calls delta holding a null, or an object where the list belongs, is skipped as malformed and does not break the stream, before the first token or after it', async () => {
    const ev = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c4', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const r = await streamThrough(async (res) => {
      sseHead(res);
      res.write(ev({ role: 'assistant', tool_calls: [null] }));
      res.write(ev({ content: 'Hi' }));
      await client.reached('"Hi"');
      res.write(ev({ tool_calls: { length: 1 } }));
      res.write(ev({ tool_calls: [5, { index: 0, function: null }] }));
      res.write(ev({ content: ' there' }));
      res.end(ev({}, 'stop') + 'data: [DONE]\n\n');
    });
    expect(r.status).toBe(200);
    expect(contentOf(r.values)).toBe('Hi there');
    expect(r.body).not.toContain('"error"');
    // Not relayed: a client SDK assembling tool calls by index would throw on them.
    expect(r.body).not.toContain('tool_calls');
    expect(r.values.at(-1)).toBe('[DONE]');
  });

  it('`data:  [DONE]` with two spaces ends the stream: nothing after it is relayed', async () => {
    const r = await streamThrough(async (res) => {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content: '' }));
      res.write(chunk('m', { content: 'Done.' }));
      res.write(chunk('m', {}, 'stop'));
      res.write('data:  [DONE]\n\n');
      res.end(chunk('m', { content: 'AFTER' }));
    });
    expect(r.status).toBe(200);
    expect(contentOf(r.values)).toBe('Done.');
    expect(r.body).not.toContain('AFTER');
    expect(r.values.at(-1)).toBe('[DONE]');
  });

  it('content an upstream sends after its finish_reason is not relayed: the finish chunk is the end of the answer, with or without include_usage', async () => {
    for (const request of [{}, { stream_options: { include_usage: true } }]) {
      const r = await streamThrough(
        async (res) => {
          sseHead(res);
          res.write(chunk('m', { role: 'assistant', content: '' }));
          res.write(chunk('m', { content: 'Done.' }));
          res.write(chunk('m', {}, 'stop'));
          res.write(chunk('m', { content: ' AFTER' }));
          res.end(chunk('m', {}, 'length') + 'data: [DONE]\n\n');
        },
        {},
        request,
      );
      expect(r.status).toBe(200);
      expect(contentOf(r.values)).toBe('Done.');
      expect(r.body).not.toContain('AFTER');
      const finishes = r.values.flatMap((v) => ((v as { choices?: { finish_reason?: string | null }[] }).choices ?? []).map((c) => c.finish_reason)).filter(Boolean);
      expect(finishes).toEqual(['stop']);
      expect(r.values.at(-1)).toBe('[DONE]');
    }
  });

  it('a stream cut after its first text, with resume off, says how much had arrived', async () => {
    const r = await streamThrough(
      async (res) => {
        sseHead(res);
        res.write(chunk('m', { role: 'assistant', content: '' }));
        res.write(chunk('m', { content: 'Hello' }));
        await client.reached('"Hello"');
        res.socket?.destroy();
      },
      { streamResume: false },
    );
    expect(r.status).toBe(200);
    expect(contentOf(r.values)).toBe('Hello');
    const last = r.values.at(-1) as { error?: { code?: string; message?: string } };
    expect(last.error?.code).toBe('stream_broken');
    expect(last.error?.message).toContain('after 5 characters');
  });

  it('a line that never ends is cut at MAX_EVENT_CHARS: the attempt fails as the upstream\'s fault, not after the first-token timeout', async () => {
    let released = false;
    const upstream = await startRawUpstream((res) => {
      sseHead(res);
      res.write('data: {"choices":[{"index":0,"delta":{"content":"');
      res.on('close', () => (released = true));
      const piece = 'a'.repeat(1 << 20);
      // Without end: a gateway that did not cut the line would read on until the test times out.
      // (How much got written says nothing: loopback buffers take up to tcp_rmem + tcp_wmem's
      // maximum, 36 MiB on these machines, more than the bound itself.)
      const more = (): void => {
        while (!res.destroyed) if (!res.write(piece)) return void res.once('drain', more);
      };
      more();
    });
    closers.push(() => upstream.close());
    await expectRefusedAsServer(upstream.url);
    // Cut at the bound, then the upstream let go of.
    await expect.poll(() => released).toBe(true);
  });

  it('chunks without content, flooded before the first token, are held only up to a bound: the attempt fails as the upstream\'s fault', async () => {
    let released = false;
    const upstream = await startRawUpstream((res) => {
      sseHead(res);
      res.on('close', () => (released = true));
      const flood = chunk('m', { role: 'assistant' }).repeat(1000);
      const more = (): void => {
        while (!res.destroyed) if (!res.write(flood)) return void res.once('drain', more);
      };
      more();
    });
    closers.push(() => upstream.close());
    await expectRefusedAsServer(upstream.url);
    await expect.poll(() => released).toBe(true);
  });

  for (const [label, body] of [
    ['a role chunk, then [DONE]', chunk('m', { role: 'assistant', content: '' }) + 'data: [DONE]\n\n'],
    ['[DONE] alone', 'data: [DONE]\n\n'],
    ['only a usage chunk, then [DONE]', usageChunk('m', 5, 0) + 'data: [DONE]\n\n'],
  ] as const) {
    it(`a stream that ends cleanly with no answer at all (${label}) is no answer: the attempt fails as the upstream's fault, not an empty 200`, async () => {
      const upstream = await startRawUpstream((res) => {
        sseHead(res);
        res.end(body);
      });
      closers.push(() => upstream.close());
      await expectRefusedAsServer(upstream.url);
    });
  }

  it('a model\'s reasoning before its answer (thousands of reasoning_content deltas) is still held and delivered whole', async () => {
    const r = await streamThrough(async (res) => {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content: '' }));
      res.write(Array.from({ length: 5000 }, () => chunk('m', { reasoning_content: 'hm ' })).join(''));
      res.write(chunk('m', { content: 'Answer.' }));
      res.end(chunk('m', {}, 'stop') + 'data: [DONE]\n\n');
    });
    expect(r.status).toBe(200);
    expect(r.values.filter((v) => (v as { choices?: { delta?: { reasoning_content?: string } }[] }).choices?.[0]?.delta?.reasoning_content)).toHaveLength(5000);
    expect(contentOf(r.values)).toBe('Answer.');
    expect(r.values.at(-1)).toBe('[DONE]');
  });

  describe('n = 2', () => {
    const ev = (index: number, delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c3', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index, delta, finish_reason: finish }] })}\n\n`;

    it('a stream that ends once one of its two choices finished was cut: an error event, not [DONE]', async () => {
      const r = await streamThrough(
        async (res) => {
          sseHead(res);
          res.write(ev(0, { role: 'assistant', content: 'Hel' }));
          res.write(ev(1, { role: 'assistant', content: 'Bye' }));
          await client.reached('"Bye"');
          // Choice 1 finishes; choice 0 never does, and the body ends cleanly without [DONE].
          res.end(ev(1, {}, 'stop'));
        },
        {},
        { n: 2 },
      );
      expect(r.status).toBe(200);
      expect(r.values).not.toContain('[DONE]');
      const last = r.values.at(-1) as { error?: { code?: string; message?: string } };
      expect(last.error?.code).toBe('stream_broken');
      // What the client got counts both choices' text ('Hel' and 'Bye'), not only the first's.
      expect(last.error?.message).toMatch(/after 6 characters/);
    });

    it('a stream whose two choices both finish ends with [DONE]', async () => {
      const r = await streamThrough(
        async (res) => {
          sseHead(res);
          res.write(ev(0, { role: 'assistant', content: 'Hello' }));
          res.write(ev(1, { role: 'assistant', content: 'Bye' }));
          await client.reached('"Bye"');
          res.write(ev(1, {}, 'stop'));
          res.write(ev(0, {}, 'length'));
          res.end('data: [DONE]\n\n');
        },
        {},
        { n: 2 },
      );
      expect(r.status).toBe(200);
      expect(r.values.at(-1)).toBe('[DONE]');
      expect(r.body).not.toContain('"error"');
    });
  });
});
