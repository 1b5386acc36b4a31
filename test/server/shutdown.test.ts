/**
 * Graceful shutdown in-process: close(graceMs) stops accepting at once, lets an
 * in-flight stream finish with [DONE], and resolves; when the grace runs out, a
 * stream still going ends with an error event and a buffered request still
 * waiting gets a 503, both shutting_down and traced so; idle keep-alive sockets
 * do not hold it up.
 */
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, type TraceRecord } from '../../src/observability/events.js';
import { openaiProvider, startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream } from '../helpers/raw-upstream.js';
import { chatBody, readUntil, sseData } from './wire.js';
import { seenText } from '../helpers/wait.js';

// 40 pieces at 40 a second: a stream of about one second.
const REPLY = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');

let gw: TestGateway | undefined;
/** Every trace emitted, as it was emitted (the store is released by close). */
let traced: TraceRecord[] = [];
afterEach(async () => {
  await gw?.close(0);
  gw = undefined;
  traced = [];
});

function startWith(simulate: Record<string, unknown>) {
  const bus = new EventBus();
  bus.on('request', (t) => traced.push(t));
  return startGateway(
    {
      providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0, ...simulate } }],
      models: [{ name: 'fast', deployments: [{ provider: 'sim', model: 'm' }] }],
    },
    { bus },
  );
}

const start = (tokensPerSecond: number) => startWith({ tokensPerSecond, reply: REPLY });

async function refused(port: number): Promise<boolean> {
  const s = connect(port, '127.0.0.1');
  try {
    await once(s, 'connect');
    s.destroy();
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
  }
}

/** A raw socket with a streamed chat request on it, once its first event arrived; `got()` is all it has read. */
async function streamOnRawSocket(port: number): Promise<{ s: Socket; got: () => string }> {
  const s = connect(port, '127.0.0.1');
  await once(s, 'connect');
  let got = '';
  s.on('data', (d: Buffer) => {
    got += d.toString();
  });
  const body = chatBody('fast', { stream: true });
  s.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  await expect.poll(() => got.includes('data: ')).toBe(true);
  return { s, got: () => got };
}

describe('close(graceMs)', () => {
  it('refuses new connections, lets the in-flight stream finish with [DONE], then resolves', async () => {
    gw = await start(40);
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: chatBody('fast', { stream: true }) });
    expect(r.status).toBe(200);
    const body = r.body!;
    const reader = readUntil(body, (t) => t.includes('data: [DONE]'));

    const t0 = Date.now();
    let closedAt = 0;
    const closing = gw.close(10_000).then(() => {
      closedAt = Date.now();
    });
    // Synchronously after close(): the listening socket is gone.
    expect(await refused(gw.port)).toBe(true);
    await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();

    const text = await reader;
    const doneAt = Date.now();
    const data = sseData(text);
    expect(data.at(-1)).toBe('[DONE]');
    const pieces = data.slice(0, -1).map((d) => JSON.parse(d) as { choices: Array<{ delta?: { content?: string }; finish_reason: string | null }> });
    expect(pieces.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(REPLY);
    expect(pieces.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);

    await closing;
    // close waited for the stream (not the whole grace), then resolved.
    expect(closedAt).toBeGreaterThanOrEqual(doneAt - 50);
    expect(closedAt - t0).toBeLessThan(5000);
    expect(gw.server.inFlight).toBe(0);
  });

  it('ends a stream that outlasts the grace period with a shutting_down error event, and still resolves', async () => {
    gw = await start(5); // about 8 s
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: chatBody('fast', { stream: true }) });
    const id = r.headers.get('x-request-id')!;
    const reading = readUntil(r.body!, () => false).then(
      (t) => ({ text: t, error: undefined as unknown }),
      (error: unknown) => ({ text: '', error }),
    );
    const t0 = Date.now();
    await gw.close(300);
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
    const out = await reading;
    // The body ended cleanly: the events streamed so far, then one error event instead of [DONE].
    expect(out.error).toBeUndefined();
    const data = sseData(out.text);
    expect(data.length).toBeGreaterThan(1);
    expect(data).not.toContain('[DONE]');
    expect(JSON.parse(data.at(-1)!)).toEqual({
      error: { message: 'The gateway is shutting down; retry the request', type: 'service_unavailable_error', code: 'shutting_down', param: null },
    });
    // The trace tells the gateway's cut from a client that left.
    const t = traced.find((x) => x.id === id)!;
    expect(t.status).toBe(200);
    expect(t.errorCode).toBe('shutting_down');
    expect(t.streamOutcome).toBe('broken');
  });

  it('answers a buffered request still waiting when the grace runs out with 503 shutting_down and Retry-After', async () => {
    gw = await startWith({ latencyMs: 5000, tokensPerSecond: 1000 });
    const answer = fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: chatBody('fast'), headers: { 'x-request-id': 'req-cut-by-shutdown' } });
    await expect.poll(() => gw!.server.inFlight).toBe(1);
    const t0 = Date.now();
    await gw.close(200);
    expect(Date.now() - t0).toBeLessThan(3000);
    const r = await answer;
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('shutting_down');
    const t = traced.find((x) => x.id === 'req-cut-by-shutdown')!;
    expect(t.status).toBe(503);
    expect(t.errorCode).toBe('shutting_down');
    // The attempt was on its way: traced as aborted, not as the upstream's failure.
    expect(t.attempts.map((a) => a.errorType)).toEqual(['aborted']);
  });

  it('ends a stream from a loopback OpenAI upstream the same way, and releases its upstream connection', async () => {
    const upstream = await startRawUpstream((res) => {
      sseHead(res);
      res.write(chunk('up-1', { role: 'assistant', content: 'Hel' }));
      res.write(chunk('up-1', { content: 'lo' }));
      // …and nothing more: the stream outlives any grace.
    });
    try {
      const bus = new EventBus();
      bus.on('request', (t) => traced.push(t));
      gw = await startGateway(
        { providers: [openaiProvider('up', upstream.url)], models: [{ name: 'fast', deployments: [{ provider: 'up', model: 'up-1' }] }] },
        { bus },
      );
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: chatBody('fast', { stream: true }) });
      const reading = readUntil(r.body!, () => false);
      await expect.poll(() => upstream.openSockets()).toBe(1);
      await gw.close(200);
      const data = sseData(await reading);
      expect(data.slice(0, -1).map((d) => (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content).join('')).toBe('Hello');
      expect((JSON.parse(data.at(-1)!) as { error: { code: string } }).error.code).toBe('shutting_down');
      expect(traced.find((t) => t.id === r.headers.get('x-request-id'))?.errorCode).toBe('shutting_down');
      await expect.poll(() => upstream.openSockets()).toBe(0);
    } finally {
      await upstream.close();
    }
  });

  it('ends a stream that is being resumed after a cut the same way, and releases the continuation', async () => {
    // The first answer cuts after two words, once the client has them; the continuation (prefill) is accepted and never answered.
    const seen = seenText();
    const upstream = await startRawUpstream(async (res, _hit, n) => {
      if (n > 1) return;
      sseHead(res);
      res.write(chunk('up-1', { role: 'assistant', content: 'one ' }));
      res.write(chunk('up-1', { content: 'two ' }));
      await seen.reached('"two "');
      res.destroy();
    });
    try {
      const bus = new EventBus();
      bus.on('request', (t) => traced.push(t));
      gw = await startGateway(
        {
          resilience: { ttftTimeoutMs: 30_000, requestTimeoutMs: 30_000, maxRetries: 0 },
          providers: [openaiProvider('up', upstream.url)],
          models: [{ name: 'fast', deployments: [{ provider: 'up', model: 'up-1', capabilities: ['prefill'] }] }],
        },
        { bus },
      );
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: chatBody('fast', { stream: true }) });
      const reading = readUntil(r.body!, (text) => (seen.add(text.slice(seen.text.length)), false));
      // The continuation is out (a second hit, its socket open) and waiting for its first token.
      await expect.poll(() => upstream.hits.length).toBe(2);
      seen.check(); // the cut came once the client had the two words, not by a timer
      expect(upstream.hits[1]!.text).toContain('one two ');
      const t0 = Date.now();
      await gw.close(200);
      expect(Date.now() - t0).toBeLessThan(3000);
      const data = sseData(await reading);
      expect(data.slice(0, -1).map((d) => (JSON.parse(d) as { choices: Array<{ delta: { content?: string } }> }).choices[0]!.delta.content ?? '').join('')).toBe('one two ');
      expect((JSON.parse(data.at(-1)!) as { error: { code: string } }).error.code).toBe('shutting_down');
      const t = traced.find((x) => x.id === r.headers.get('x-request-id'))!;
      expect(t.errorCode).toBe('shutting_down');
      expect(t.streamOutcome).toBe('broken');
      expect(t.attempts.map((a) => [a.errorType, a.resume ?? false])).toEqual([
        ['network', false],
        ['aborted', true],
      ]);
      await expect.poll(() => upstream.openSockets()).toBe(0);
    } finally {
      await upstream.close();
    }
  });

  it('ends a stream with its error event when another request is pipelined behind it', async () => {
    gw = await start(5); // about 8 s
    const { s, got } = await streamOnRawSocket(gw.port);
    // Pipelined behind the stream: node answers it only after the stream's response ends.
    s.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await expect.poll(() => gw!.server.inFlight).toBe(2);
    const closed = once(s, 'close');
    await gw.close(200);
    await closed;
    expect(got()).toContain('"code":"shutting_down"');
    expect(got()).not.toContain('data: [DONE]');
  });

  it('is not held up by idle keep-alive connections', async () => {
    gw = await start(1000);
    // Leave a few pooled keep-alive connections behind.
    await Promise.all([1, 2, 3].map(async () => (await fetch(`${gw!.url}/v1/chat/completions`, { method: 'POST', body: chatBody() })).text()));
    const t0 = Date.now();
    await gw.close(10_000);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('answers a request that arrives on an open connection while closing with connection: close', async () => {
    gw = await start(40);
    // One socket, a slow stream on it, then (pipelined after it) /readyz.
    const { s, got } = await streamOnRawSocket(gw.port);
    const closing = gw.close(10_000);
    s.write('GET /readyz HTTP/1.1\r\nhost: x\r\n\r\n');
    await once(s, 'close');
    await closing;
    const text = got();
    expect(text).toContain('data: [DONE]');
    const second = text.slice(text.indexOf('data: [DONE]'));
    expect(second).toMatch(/HTTP\/1\.1 503/);
    expect(second.toLowerCase()).toContain('connection: close');
    expect(second).toContain('"status":"shutting_down"');
  });
});
