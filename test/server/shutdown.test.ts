/**
 * Graceful shutdown in-process: close(graceMs) stops accepting at once, lets an
 * in-flight stream finish with [DONE], and resolves; a stream longer than the
 * grace is cut when it runs out; idle keep-alive sockets do not hold it up.
 */
import { connect } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatBody, readUntil, sseData } from './wire.js';

// 40 pieces at 40 a second: a stream of about one second.
const REPLY = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  gw = undefined;
});

function start(tokensPerSecond: number) {
  return startGateway({
    providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0, tokensPerSecond, reply: REPLY } }],
    models: [{ name: 'fast', deployments: [{ provider: 'sim', model: 'm' }] }],
  });
}

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

  it('cuts a stream that outlasts the grace period, and still resolves', async () => {
    gw = await start(5); // about 8 s
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', body: chatBody('fast', { stream: true }) });
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
    // The client sees the connection end without [DONE] (a terminated body).
    expect(out.text.includes('[DONE]')).toBe(false);
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
    const s = connect(gw.port, '127.0.0.1');
    await once(s, 'connect');
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString();
    });
    const body = chatBody('fast', { stream: true });
    s.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await expect.poll(() => got.includes('data: ')).toBe(true);
    const closing = gw.close(10_000);
    s.write('GET /readyz HTTP/1.1\r\nhost: x\r\n\r\n');
    await once(s, 'close');
    await closing;
    expect(got).toContain('data: [DONE]');
    const second = got.slice(got.indexOf('data: [DONE]'));
    expect(second).toMatch(/HTTP\/1\.1 503/);
    expect(second.toLowerCase()).toContain('connection: close');
    expect(second).toContain('"status":"shutting_down"');
  });
});
