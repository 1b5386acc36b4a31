/**
 * Keep-alive to the upstream survives a stream's epilogue. The gateway ends
 * the client's stream as soon as the answer and its usage are in, but the
 * upstream's `[DONE]` and the end of its chunked body may come in a later
 * read: abandoning the body there would cost the connection (every stream a
 * new TCP connection under load). It is read to its end in the background,
 * within the finish grace, and released if it never comes.
 *
 * The gateway runs on a virtual clock: the finish grace passes only when a test moves it on, and
 * a background read has reached the body's end when the grace timer is gone (clock.pending 0).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { chunk, usageChunk } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';
import { deferred, until, within } from '../helpers/wait.js';

/** How long the gateway reads an upstream body on after the answer (live-stream.ts FINISH_GRACE_MS). */
const FINISH_GRACE_MS = 1000;

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/**
 * An upstream streaming a short answer; `epilogue` decides how `[DONE]` and the body's end follow
 * the usage chunk: `later` and `large` once the test calls `sendEpilogue()` (after its client was
 * answered), `never` not at all.
 */
async function upstream(epilogue: 'later' | 'never' | 'large') {
  let connections = 0;
  let gate = deferred();
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
      // A separate read on the gateway's side, after it has answered its client.
      await gate.promise;
      gate = deferred();
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    connections: () => connections,
    busy: () => busy.size,
    sendEpilogue: () => gate.resolve(),
  };
}

async function gatewayFor(url: string) {
  const clock = new VirtualClock();
  const gw = await startGateway(
    {
      providers: [{ id: 'up', type: 'openai', baseUrl: url }],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
    },
    { clock },
  );
  closers.push(() => gw.close(0));
  return { client: new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 }), clock };
}

/** The client's answer, which must come while the upstream still holds back its `[DONE]`. */
const answeredBeforeDone = (client: OpenAI) => within(readAll(client), "the client's answer, before the upstream's [DONE]");

/** The gateway's background read reached the upstream body's end: it cleared the finish grace's timer, its last. */
const bodyReadToEnd = (clock: VirtualClock) => until(() => clock.pending === 0, "the gateway to read the upstream's body to its end");

async function readAll(client: OpenAI): Promise<{ text: string }> {
  const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  let text = '';
  for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
  return { text };
}

describe('upstream connection reuse after a stream', () => {
  it('a [DONE] arriving after the client was answered: the next streams reuse the one connection', async () => {
    const up = await upstream('later');
    const { client, clock } = await gatewayFor(up.url);
    for (let i = 0; i < 3; i++) {
      // Answered without waiting for the upstream's [DONE], which it sends only after.
      expect((await answeredBeforeDone(client)).text).toBe('Hello there.');
      up.sendEpilogue();
      // The background read reaches the body's end (no time passes for the grace) before the next request.
      await bodyReadToEnd(clock);
    }
    expect(up.connections()).toBe(1);
  });

  it('an epilogue larger than the gateway buffers unread is read to its end too: the connection is still reused', async () => {
    const up = await upstream('large');
    const { client, clock } = await gatewayFor(up.url);
    for (let i = 0; i < 3; i++) {
      expect((await answeredBeforeDone(client)).text).toBe('Hello there.');
      up.sendEpilogue();
      await bodyReadToEnd(clock);
    }
    expect(up.connections()).toBe(1);
  });

  it('an upstream that never ends its body after the answer: the client is answered at once, the connection released after the grace', async () => {
    const up = await upstream('never');
    const { client, clock } = await gatewayFor(up.url);
    expect((await answeredBeforeDone(client)).text).toBe('Hello there.');
    expect(up.busy()).toBe(1);
    // Just short of the finish grace the body is still being waited for...
    await clock.advance(FINISH_GRACE_MS - 1);
    expect(clock.pending).toBe(1);
    expect(up.busy()).toBe(1);
    // ...at the grace the gateway gives it up, and its connection with it.
    await clock.advance(1);
    await until(() => up.busy() === 0, 'the gateway to close the upstream connection after the finish grace');
  });
});
