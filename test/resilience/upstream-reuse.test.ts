/**
 * Keep-alive to the upstream survives a stream's epilogue. The gateway ends
 * the client's stream as soon as the answer and its usage are in, but the
 * upstream's `[DONE]` and the end of its chunked body may come in a later
 * read: abandoning the body there would cost the connection (every stream a
 * new TCP connection under load). It is read to its end in the background,
 * within the finish grace, and released if it never comes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { chunk, sleep, usageChunk } from '../helpers/raw-upstream.js';

const DONE_AFTER_MS = 400;

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** An upstream streaming a short answer; `epilogue` decides how `[DONE]` and the body's end follow the usage chunk. */
async function upstream(epilogue: 'later' | 'never' | 'large') {
  let connections = 0;
  const open = new Set<Socket>();
  /** Sockets that carried a request and are not closed yet. */
  const busy = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    req.resume();
    busy.add(req.socket);
    req.socket.once('close', () => busy.delete(req.socket));
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk('m', { role: 'assistant', content: '' }));
      res.write(chunk('m', { content: 'Hello there.' }));
      res.write(chunk('m', {}, 'stop'));
      res.write(usageChunk('m', 5, 3));
      if (epilogue === 'never') return;
      // A separate read on the gateway's side, well after it has answered its client.
      await sleep(DONE_AFTER_MS);
      // Far more than the gateway buffers unread (64 KB): only a reader gets the body to its end.
      if (epilogue === 'large') for (let i = 0; i < 8; i++) res.write(`: ${'x'.repeat(32 * 1024)}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  server.on('connection', (s: Socket) => {
    connections++;
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, connections: () => connections, busy: () => busy.size };
}

async function gatewayFor(url: string) {
  const gw = await startGateway({
    providers: [{ id: 'up', type: 'openai', baseUrl: url }],
    models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
  });
  closers.push(() => gw.close(0));
  return new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
}

async function readAll(client: OpenAI): Promise<{ text: string; ms: number }> {
  const t0 = Date.now();
  const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
  return { text, ms: Date.now() - t0 };
}

describe('upstream connection reuse after a stream', () => {
  it('a [DONE] arriving after the client was answered: the next streams reuse the one connection', async () => {
    const up = await upstream('later');
    const client = await gatewayFor(up.url);
    for (let i = 0; i < 3; i++) {
      const r = await readAll(client);
      expect(r.text).toBe('Hello there.');
      // Answered without waiting for the upstream's [DONE].
      expect(r.ms).toBeLessThan(DONE_AFTER_MS);
      // Let the background read reach the body's end before the next request.
      await sleep(DONE_AFTER_MS + 100);
    }
    expect(up.connections()).toBe(1);
  });

  it('an epilogue larger than the gateway buffers unread is read to its end too: the connection is still reused', async () => {
    const up = await upstream('large');
    const client = await gatewayFor(up.url);
    for (let i = 0; i < 3; i++) {
      expect((await readAll(client)).text).toBe('Hello there.');
      await sleep(DONE_AFTER_MS + 200);
    }
    expect(up.connections()).toBe(1);
  });

  it('an upstream that never ends its body after the answer: the client is answered at once, the connection released after the grace', async () => {
    const up = await upstream('never');
    const client = await gatewayFor(up.url);
    const r = await readAll(client);
    expect(r.text).toBe('Hello there.');
    expect(r.ms).toBeLessThan(500);
    expect(up.busy()).toBe(1);
    // The finish grace is 1 s; then the gateway gives the body up, and its connection with it.
    const until = Date.now() + 3000;
    while (up.busy() > 0 && Date.now() < until) await sleep(50);
    expect(up.busy()).toBe(0);
  });
});
