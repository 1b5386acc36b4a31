/**
 * The load generator's byte-level response reader decides what counts as a
 * completed request and what as an error (the verdict's "no errors" and the
 * hold's "all completed"): driven here against tiny local servers that split
 * their answers into pieces, and against the mock upstream.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody } from '../../bench/bodies.js';
import { httpRequest, type Gateway } from '../../bench/paths.js';
import { asLibrary } from './as-library.js';

const { keepTail, runLoad, tailHasDone } = await asLibrary(() => import('../../bench/loadgen.js'));
const { startMock } = await asLibrary(() => import('../../bench/mock-upstream.js'));

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

const pause = () => new Promise((r) => setTimeout(r, 2));

/** A server that answers each request by writing `pieces` one at a time (a pause between), then maybe closing. */
async function answering(pieces: string[], close = false): Promise<number> {
  const server = createServer({ noDelay: true }, (socket: Socket) => {
    socket.on('error', () => {});
    socket.on('data', async () => {
      for (const p of pieces) {
        socket.write(p);
        await pause();
      }
      if (close) socket.end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

const REQUEST = 'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}';
const once = (port: number, stream: boolean, connections = 1) => runLoad({ port, request: REQUEST, connections, durationMs: 0, stream });

/** `text` as HTTP chunks of at most `size` bytes, then the last chunk. */
const chunked = (text: string, size: number) => {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) {
    const c = text.slice(i, i + size);
    out.push(`${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`);
  }
  return [...out, '0\r\n\r\n'];
};
const SSE_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n';
const EVENTS = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';

describe('keepTail and tailHasDone', () => {
  it('keeps the last 32 bytes of a body however it arrives', () => {
    const pieces = ['data: {"content":"a"}\n\n', 'data: [DO', 'NE]\n\n'];
    let tail: Buffer = Buffer.alloc(0);
    for (const piece of pieces) tail = keepTail(tail, Buffer.from(piece));
    // 23 + 9 + 5 = 37 bytes: the first 5 are gone.
    expect(tail.toString()).toBe(' {"content":"a"}\n\ndata: [DONE]\n\n');
    expect(tailHasDone(tail)).toBe(true);
    const long = Buffer.from(`${'x'.repeat(100)}data: [DONE]\n\n`);
    expect(keepTail(Buffer.from('old'), long).toString()).toBe(long.subarray(-32).toString());
  });

  it('[DONE] followed by more events is no longer the end', () => {
    let tail: Buffer = keepTail(Buffer.alloc(0), Buffer.from('data: [DONE]\n\n'));
    tail = keepTail(tail, Buffer.from(`data: ${'{"late":true}'.repeat(3)}\n\n`));
    expect(tailHasDone(tail)).toBe(false);
  });
});

describe('runLoad reading responses', () => {
  it('a content-length answer split mid-head and mid-body completes once', async () => {
    const body = '{"ok":true}';
    const port = await answering(['HTTP/1.1 200 OK\r\ncontent-le', `ngth: ${body.length}\r\n\r\n{"ok"`, ':true}']);
    const r = await once(port, false);
    expect(r).toMatchObject({ completed: 1, errors: 0, errorKinds: [], peakOpen: 1 });
    expect(r.p50Ms).toBeGreaterThan(0);
    expect(r.maxMs).toBe(r.p99Ms);
  });

  it('a chunked stream ending in [DONE], in small chunks, completes', async () => {
    const port = await answering([SSE_HEAD, ...chunked(EVENTS, 7)]);
    expect(await once(port, true)).toMatchObject({ completed: 1, errors: 0 });
  });

  it('a stream that ends without [DONE] is an error, not a completion', async () => {
    const port = await answering([SSE_HEAD, ...chunked('data: {"choices":[]}\n\n', 5)]);
    expect(await once(port, true)).toMatchObject({ completed: 0, errors: 1, errorKinds: ['stream ended without [DONE]'] });
  });

  it('a buffered answer is not checked for [DONE]', async () => {
    const port = await answering(['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n', ...chunked('{"ok":true}', 4)]);
    expect(await once(port, false)).toMatchObject({ completed: 1, errors: 0 });
  });

  it('a status other than 200 is an error named by its status', async () => {
    const port = await answering(['HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n']);
    expect(await once(port, false, 2)).toMatchObject({ completed: 0, errors: 2, errorKinds: ['status 503'] });
  });

  it('an answer with neither length nor chunking is an error', async () => {
    const port = await answering(['HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nhello'], true);
    expect(await once(port, false)).toMatchObject({ completed: 0, errors: 1, errorKinds: ['response without length'] });
  });

  it('a connection closed mid-body is an error', async () => {
    const port = await answering(['HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"trunc'], true);
    const r = await once(port, false);
    expect(r).toMatchObject({ completed: 0, errors: 1, errorKinds: ['connection closed mid-response'] });
    expect(r.p50Ms).toBeNaN();
  });

  it('carries on over a new connection when the server closes after each answer', async () => {
    const port = await answering(['HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}'], true);
    const r = await runLoad({ port, request: REQUEST, connections: 1, durationMs: 150, stream: false });
    expect(r.errors).toBe(0);
    expect(r.completed).toBeGreaterThan(1);
  });
});

describe('runLoad against the mock upstream', () => {
  const gateway = { headers: { authorization: 'Bearer sk-test' } } as Partial<Gateway> as Gateway; // httpRequest reads only the headers

  async function mock() {
    const m = startMock();
    servers.push(m.server);
    return { ...m, port: await m.listening };
  }

  it('a timed run: RPS is completions over the duration, with no errors', async () => {
    const m = await mock();
    const r = await runLoad({ port: m.port, request: httpRequest(gateway, m.port, chatBody('buffered', 'gpt-4o-mini')), connections: 2, durationMs: 200, stream: false });
    expect(r.errors).toBe(0);
    expect(r.completed).toBeGreaterThan(0);
    expect(r.elapsedMs).toBe(200);
    expect(r.rps).toBeCloseTo(r.completed * 5, 9);
    expect(r.p50Ms).toBeLessThanOrEqual(r.p99Ms);
    expect(r.p99Ms).toBeLessThanOrEqual(r.maxMs);
  });

  it('20-chunk streams end in [DONE]', async () => {
    const m = await mock();
    const r = await runLoad({ port: m.port, request: httpRequest(gateway, m.port, chatBody('stream20', 'gpt-4o-mini')), connections: 4, durationMs: 0, stream: true });
    expect(r).toMatchObject({ completed: 4, errors: 0 });
  });

  it('the hold: all-open once every stream has its headers, and every stream counted open at once', async () => {
    const m = await mock();
    m.setMode({ kind: 'slow', chunks: 2, intervalMs: 10 });
    let allOpen = 0;
    const r = await runLoad({ port: m.port, request: httpRequest(gateway, m.port, chatBody('hold', 'gpt-4o-mini')), connections: 5, durationMs: 0, stream: true }, () => allOpen++);
    expect(allOpen).toBe(1);
    expect(r).toMatchObject({ completed: 5, errors: 0, peakOpen: 5 });
  });
});
