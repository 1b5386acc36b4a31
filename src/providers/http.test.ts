/**
 * HttpUpstream over real loopback servers: the dispatch-based exchange must
 * behave like a well-mannered HTTP client — whole bodies of any size, streams
 * read as they come with backpressure, aborts that say why and release the
 * socket, and no leaked connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../core/clock.js';
import { AttemptAborted } from '../resilience/abort.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import { headersOf, HttpUpstream, type HttpUpstreamOptions } from './http.js';
import { errorFromResponse } from '../resilience/classify.js';
import { parseRateLimitHeaders, RATE_LIMIT_HEADERS } from '../limits/rate-limit-headers.js';
import { NO_HEADERS } from './types.js';
import { until } from '../../test/helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

async function server(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void, opts: Partial<HttpUpstreamOptions> = {}) {
  const sockets = new Set<Socket>();
  /** Sockets that carried a request and are still open (undici may open a spare idle one after an abort). */
  const busy = new Set<Socket>();
  const srv = createServer((req, res) => {
    busy.add(req.socket);
    req.socket.once('close', () => busy.delete(req.socket));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => handler(req, res, body));
  });
  srv.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  );
  const http = new HttpUpstream(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`, { connections: 4, headers: { authorization: 'Bearer k' }, clock: systemClock, ...opts });
  closers.push(() => http.close());
  return { http, sockets, busy };
}

const never = () => new AbortController().signal;
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

describe('HttpUpstream', () => {
  it('POSTs to the base path with the configured headers and reads a whole body', async () => {
    let seen: { url?: string; auth?: string; type?: string; body?: string } = {};
    const { http } = await server((req, res, body) => {
      seen = { url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body };
      res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '9' });
      res.end('{"ok":true}');
    });
    const res = await http.postOk('/chat/completions', '{"a":1}', never());
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-remaining-requests']).toBe('9');
    expect(new TextDecoder().decode(await http.bytes(res, never()))).toBe('{"ok":true}');
    expect(seen).toEqual({ url: '/v1/chat/completions', auth: 'Bearer k', type: 'application/json', body: '{"a":1}' });
  });

  it('reads a body far above the streaming high-water mark without stalling', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const { http } = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(big);
    });
    const res = await http.postOk('/embeddings', '{}', never());
    expect((await http.bytes(res, never())).byteLength).toBe(big.length);
  });

  it('a non-2xx answer is read and thrown as a classified UpstreamError', async () => {
    const { http } = await server((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end('{"error":{"message":"slow down","type":"rate_limit_error"}}');
    });
    const err = await http.postOk('/chat/completions', '{}', never()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).category).toBe('rate_limited');
    expect((err as UpstreamError).status).toBe(429);
  });

  it('streams pieces as they arrive, and the connection is reused after a complete stream', async () => {
    const { http, sockets } = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const w of ['one ', 'two ', 'three']) {
        res.write(w);
        await tick(10);
      }
      res.end();
    });
    for (let i = 0; i < 3; i++) {
      const res = await http.postOk('/chat/completions', '{}', never());
      const pieces: string[] = [];
      for await (const p of http.text(res, never())) pieces.push(p);
      expect(pieces.join('')).toBe('one two three');
      expect(pieces.length).toBeGreaterThan(1);
      // undici hands a keep-alive socket back one event-loop turn after its response.
      await tick(5);
    }
    expect(sockets.size).toBe(1);
  });

  it("a streamed exchange's head says its content-type as sent, in any letter case of the name, or nothing when it has none", async () => {
    const types = [['Content-Type', 'application/json; charset=utf-8'], ['CONTENT-TYPE', 'text/event-stream'], undefined] as const;
    const { http } = await server((req, res) => {
      const sent = types[Number(req.url!.slice(-1))];
      res.writeHead(200, sent ? { [sent[0]]: sent[1], 'x-content-type-options': 'nosniff' } : { 'x-content-type-options': 'nosniff' });
      res.end('{}');
    });
    const got = [];
    for (let i = 0; i < types.length; i++) {
      const res = await http.postOk(`/chat/completions?${i}`, '{}', never());
      got.push(res.contentType);
      await http.bytes(res, never());
    }
    expect(got).toEqual(['application/json; charset=utf-8', 'text/event-stream', undefined]);
  });

  it('streamed text: a character split across writes arrives whole, and a leading byte-order mark is dropped', async () => {
    const bytes = Buffer.from('\uFEFFdata: héllo 🚀 wörld\n\n');
    const { http } = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Cut inside the BOM, inside "é" and inside the 4-byte rocket.
      for (const [a, b] of [[0, 2], [2, 11], [11, 17], [17, bytes.length]] as const) {
        res.write(bytes.subarray(a, b));
        await tick(10);
      }
      res.end();
    });
    const res = await http.postOk('/chat/completions', '{}', never());
    const pieces: string[] = [];
    for await (const p of http.text(res, never())) pieces.push(p);
    expect(pieces.join('')).toBe('data: héllo 🚀 wörld\n\n');
    expect(pieces.some((p) => p.includes('\uFFFD'))).toBe(false);
  });

  it('buffered: postWhole resolves with the whole body and headers, or throws the classified error of a non-2xx', async () => {
    let status = 200;
    const { http } = await server((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-ratelimit-remaining-tokens': '77' });
      res.end(status === 200 ? '{"ok":true}' : '{"error":{"message":"overloaded","type":"server_error"}}');
    });
    const ok = await http.postWhole('/chat/completions', '{}', never());
    expect(Buffer.from(ok.raw).toString()).toBe('{"ok":true}');
    expect(ok.headers['x-ratelimit-remaining-tokens']).toBe('77');
    status = 503;
    const err = await http.postWhole('/chat/completions', '{}', never()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).status).toBe(503);
  });

  it('a whole answer above maxAnswerBytes fails as a malformed answer (server) and the exchange is cut, read buffered or whole', async () => {
    const piece = Buffer.alloc(16 * 1024, 0x20);
    let written = 0;
    const { http, busy } = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Without end: an upstream that would send for ever.
      const more = () => {
        while (res.write(piece)) written += piece.length;
        written += piece.length;
      };
      res.on('drain', more);
      more();
    }, { maxAnswerBytes: 256 * 1024 });
    const buffered = await http.postWhole('/chat/completions', '{}', never()).catch((e: unknown) => e);
    expect(buffered).toBeInstanceOf(UpstreamError);
    expect(buffered).toMatchObject({ category: 'server', message: 'upstream sent a malformed answer (larger than 262144 bytes)' });
    const res = await http.postOk('/embeddings', '{}', never());
    const whole = await http.bytes(res, never()).catch((e: unknown) => e);
    expect(whole).toMatchObject({ category: 'server', message: 'upstream sent a malformed answer (larger than 262144 bytes)' });
    await expect.poll(() => busy.size).toBe(0);
    // Cut soon after the bound, not read to the end.
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('an error answer keeps its first 64 KiB for the message and drops the rest; a stream is not bounded by maxAnswerBytes', async () => {
    const mapped: number[] = [];
    const { http } = await server(
      (req, res) => {
        if (req.url === '/v1/error') {
          res.writeHead(500, { 'content-type': 'text/plain' });
          return res.end(`busy ${'x'.repeat(1024 * 1024)}`);
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('y'.repeat(1024 * 1024));
      },
      {
        maxAnswerBytes: 256 * 1024,
        errorFromResponse: (status, body, headers, now) => {
          mapped.push(body.length);
          return errorFromResponse(status, body, headers, now);
        },
      },
    );
    const err = await http.postWhole('/error', '{}', never()).catch((e: unknown) => e);
    expect(err).toMatchObject({ category: 'server', status: 500 });
    expect((err as Error).message).toContain('busy');
    const viaHead = await http.postOk('/error', '{}', never()).catch((e: unknown) => e);
    expect(viaHead).toMatchObject({ category: 'server', status: 500 });
    expect(mapped).toEqual([64 * 1024, 64 * 1024]);
    // Streamed: read and drained as it comes, so only the high-water mark bounds it.
    const res = await http.postOk('/stream', '{}', never());
    let got = 0;
    for await (const t of http.text(res, never())) got += t.length;
    expect(got).toBe(1024 * 1024);
  });

  it('a slow reader pauses the socket instead of buffering without bound', async () => {
    const piece = 'y'.repeat(16 * 1024);
    let written = 0;
    let finished = false;
    const { http } = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pump = () => {
        while (written < 64 * 1024 * 1024) {
          written += piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        finished = true;
        res.end();
      };
      pump();
    });
    const res = await http.postOk('/chat/completions', '{}', never());
    const it = http.text(res, never())[Symbol.asyncIterator]();
    await it.next();
    await tick(200);
    // Held back by TCP: far less than the 64 MB the server wants to send.
    expect(finished).toBe(false);
    expect(written).toBeLessThan(16 * 1024 * 1024);
    await it.return(undefined);
  });

  it('an abort mid-body ends the read with the abort reason and releases the socket', async () => {
    const { http, busy } = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
    });
    const ac = new AbortController();
    const res = await http.postOk('/chat/completions', '{}', ac.signal);
    const pieces: string[] = [];
    const reading = (async () => {
      for await (const p of http.text(res, ac.signal)) pieces.push(p);
    })();
    await until(() => pieces.length > 0, 'the first piece of the body'); // mid-body: the abort comes after it
    ac.abort(new AttemptAborted('idle', 'stalled'));
    const err = await reading.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttemptAborted);
    expect((err as AttemptAborted).kind).toBe('idle');
    expect(pieces.join('')).toBe('data: first\n\n');
    await until(() => busy.size === 0, `the socket released (${busy.size} busy)`);
  });

  it('an abort before the head rejects at once with the reason', async () => {
    const { http } = await server(() => {
      // never answers
    });
    const ac = new AbortController();
    const pending = http.post('/chat/completions', '{}', ac.signal);
    await tick();
    ac.abort(new AttemptAborted('attempt_timeout', 'no answer'));
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttemptAborted);
    expect((err as AttemptAborted).kind).toBe('attempt_timeout');
  });

  it('read with onChange (no promise per wait): each registration wakes once, outside undici\'s data callback, and every piece arrives', async () => {
    const { http } = await server(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const w of ['one ', 'two ', 'three']) {
        res.write(w);
        await tick(10);
      }
      res.end();
    });
    const res = await http.postOk('/chat/completions', '{}', never());
    const src = http.textSource(res, never());
    let text = '';
    let wakes = 0;
    let insideUndici = false;
    await new Promise<void>((done) => {
      const pump = () => {
        wakes++;
        // Called from undici's onData, the stack would run through undici's parser.
        if (new Error().stack!.includes('undici')) insideUndici = true;
        for (;;) {
          const t = src.read();
          if (t !== null) text += t;
          else if (src.done) return done();
          else return src.onChange(pump);
        }
      };
      src.onChange(pump);
    });
    expect(text).toBe('one two three');
    expect(insideUndici).toBe(false);
    // One wake per registration: at most one per write and the end (fewer when pieces coalesce).
    expect(wakes).toBeGreaterThanOrEqual(2);
    expect(wakes).toBeLessThanOrEqual(4);
  });

  it('a reader that stops early releases the socket (the body is abandoned, not leaked)', async () => {
    const { http, busy } = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: a\n\n');
    });
    const res = await http.postOk('/chat/completions', '{}', never());
    for await (const p of http.text(res, never())) {
      expect(p).toBe('data: a\n\n');
      break;
    }
    await until(() => busy.size === 0, `the socket released (${busy.size} busy)`);
  });

  it('a connection refused is a network UpstreamError', async () => {
    const { http } = await server(() => {});
    const dead = new HttpUpstream('http://127.0.0.1:1/v1', { connections: 1, headers: {}, clock: systemClock });
    closers.push(() => dead.close());
    void http;
    const err = await dead.post('/x', '{}', never()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).category).toBe('network');
  });
});

describe('headersOf', () => {
  it('keeps the headers the gateway acts on: lower-cased, repeats as arrays in order; drops the rest and a __proto__ header', () => {
    const raw = [
      'Content-Type', 'application/json',
      'X-RateLimit-Remaining-Requests', '9',
      'x-ratelimit-remaining-requests', '8',
      'anthropic-ratelimit-tokens-reset', '2026-01-01T00:00:00Z',
      'Retry-After-Ms', '250',
      'retry-after', '7',
      'Set-Cookie', 'a=1',
      'x-request-id', 'req_1',
      'Authorization-Echo', 'x',
      'retry', '1',
      'x-ratelimit', '5',
      'x-ratelimitx-remaining', '5',
      'ANTHROPIC-RATELIMIT-REQUESTS-LIMIT', '50',
      '__proto__', 'x',
    ].map((s) => Buffer.from(s));
    const h = headersOf(raw);
    expect(h).toEqual({
      'x-ratelimit-remaining-requests': ['9', '8'],
      'anthropic-ratelimit-tokens-reset': '2026-01-01T00:00:00Z',
      'anthropic-ratelimit-requests-limit': '50',
      'retry-after-ms': '250',
      'retry-after': '7',
    });
    expect(Object.getPrototypeOf(h)).toBe(Object.prototype);
  });

  it('keeps every header the rate-limit and retry-after parsers read, in any letter case', () => {
    const titleCase = (n: string) => n.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase());
    for (const name of RATE_LIMIT_HEADERS) {
      for (const sent of [name, name.toUpperCase(), titleCase(name)]) {
        expect(headersOf([Buffer.from(sent), Buffer.from('1')]), sent).toEqual({ [name]: '1' });
      }
    }
  });

  it('reads pairs that are views into one buffer (as undici hands them) like separate buffers, and feeds the rate-limit parser', () => {
    const head = 'Content-Type: application/json\r\nx-ratelimit-limit-requests: 500\r\nx-ratelimit-remaining-requests: 499\r\nx-ratelimit-reset-requests: 120ms\r\nretry-after: 7\r\n';
    const buf = Buffer.from(`HTTP/1.1 200 OK\r\n${head}\r\n{"body":1}`);
    const raw: Buffer[] = [];
    for (const line of head.split('\r\n').filter(Boolean)) {
      const at = buf.indexOf(line);
      const colon = line.indexOf(':');
      raw.push(buf.subarray(at, at + colon), buf.subarray(at + colon + 2, at + line.length));
    }
    const expected = { 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '499', 'x-ratelimit-reset-requests': '120ms', 'retry-after': '7' };
    expect(headersOf(raw)).toEqual(expected);
    expect(headersOf(raw.map((b) => Buffer.from(b)))).toEqual(expected);
    expect(parseRateLimitHeaders(headersOf(raw), 1000)).toEqual({ requests: { remaining: 499, resetAt: 1120, limit: 500 }, retryAfterMs: 7000 });
  });

  it('answers an answer without any of them with the one shared, frozen empty object (what the pacer skips)', () => {
    const none = headersOf(['Content-Type', 'application/json', 'x-request-id', 'r', 'retry', '1'].map((s) => Buffer.from(s)));
    expect(none).toBe(NO_HEADERS);
    expect(headersOf([])).toBe(NO_HEADERS);
    expect(Object.isFrozen(NO_HEADERS)).toBe(true);
    expect(NO_HEADERS).toEqual({});
  });
});
