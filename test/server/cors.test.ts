/**
 * Browsers over real sockets (server.cors): a request with an Origin the config
 * allows gets the CORS headers on every answer (buffered, streamed, an error,
 * the GET routes) and its preflight a 204; any other Origin is refused with 403
 * `origin_not_allowed` before its body is read or an upstream is called (the
 * drive-by `text/plain` POST a web page can make to a gateway on loopback);
 * the gateway's own origin is allowed only where DNS rebinding cannot fake it.
 * A request without Origin gets no CORS headers at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RefusedEvent } from '../../src/observability/events.js';
import { startChatCountingRefusals, type TestGateway } from '../helpers/gateway.js';
import { chunk, completionText, sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { chatBody, expectError, rawExchange, sseData } from './wire.js';

const APP = 'https://app.example.com';
const EVIL = 'https://evil.example';
const EXPOSED = ['x-request-id', 'x-switchyard-deployment', 'x-switchyard-selection', 'x-switchyard-attempts', 'x-switchyard-fallback', 'x-switchyard-overhead-ms', 'retry-after'];

let upstream: RawUpstream;
const gateways: TestGateway[] = [];
const refused: RefusedEvent[] = [];

beforeAll(async () => {
  upstream = await startRawUpstream((res, hit) => {
    if (hit.body.stream === true) {
      sseHead(res);
      res.end(chunk('m', { role: 'assistant', content: 'hi' }) + chunk('m', {}, 'stop') + 'data: [DONE]\n\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionText('m', 'hi', 1, 1));
  });
});
afterAll(async () => {
  for (const gw of gateways) await gw.close(0);
  await upstream.close();
});

async function gateway(origins?: string[]): Promise<TestGateway> {
  const gw = await startChatCountingRefusals(upstream.url, origins === undefined ? {} : { server: { cors: { origins } } }, refused);
  gateways.push(gw);
  return gw;
}

const send = (gw: TestGateway, path: string, init: RequestInit & { headers?: Record<string, string> }) => fetch(`${gw.url}${path}`, init);
const post = (gw: TestGateway, path: string, body: string, headers: Record<string, string>) =>
  send(gw, path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
const preflight = (gw: TestGateway, path: string, origin: string, headers: Record<string, string> = {}) =>
  send(gw, path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', ...headers } });

function expectCors(r: Response, allowOrigin: string): void {
  expect(r.headers.get('access-control-allow-origin')).toBe(allowOrigin);
  expect(r.headers.get('vary')?.toLowerCase()).toContain('origin');
  expect(r.headers.get('access-control-expose-headers')?.split(/,\s*/)).toEqual(EXPOSED);
}

function expectNoCors(r: Response): void {
  expect([...r.headers.keys()].filter((k) => k.startsWith('access-control-'))).toEqual([]);
}

describe('server.cors: an allowed origin', () => {
  it('gets the CORS headers on a buffered answer, a stream, errors and the GET routes; no Origin, none', async () => {
    const gw = await gateway([APP]);
    const from = { origin: APP };
    const ok = await post(gw, '/v1/chat/completions', chatBody('chat'), from);
    expect(ok.status).toBe(200);
    expectCors(ok, APP);
    expect(ok.headers.get('x-switchyard-deployment')).toBe('up/m');
    await ok.arrayBuffer();

    const stream = await post(gw, '/v1/chat/completions', chatBody('chat', { stream: true }), from);
    expectCors(stream, APP);
    expect(sseData(await stream.text()).at(-1)).toBe('[DONE]');

    for (const [body, status] of [[chatBody('nope'), 404], ['{"model":', 400]] as const) {
      const err = await post(gw, '/v1/chat/completions', body, from);
      expect(err.status).toBe(status);
      expectCors(err, APP);
      await err.arrayBuffer();
    }
    for (const path of ['/v1/models', '/healthz', '/v2/nothing']) {
      const r = await send(gw, path, { headers: from });
      expectCors(r, APP);
      await r.arrayBuffer();
    }
    // A request without Origin (an SDK, curl) is answered as ever: no CORS headers.
    for (const r of [await post(gw, '/v1/chat/completions', chatBody('chat'), {}), await post(gw, '/v1/chat/completions', chatBody('nope'), {})]) {
      expectNoCors(r);
      await r.arrayBuffer();
    }
  });

  it('"*" allows any origin, answered with *', async () => {
    const gw = await gateway(['*']);
    for (const origin of [EVIL, 'null']) {
      const r = await post(gw, '/v1/chat/completions', chatBody('chat'), { origin });
      expect(r.status).toBe(200);
      expectCors(r, '*');
      await r.arrayBuffer();
      const p = await preflight(gw, '/v1/chat/completions', origin);
      expect(p.status).toBe(204);
      expect(p.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('gets a 204 to its preflight on every route, granting the methods that route answers', async () => {
    const gw = await gateway([APP]);
    const hits = upstream.hits.length;
    const asked = await preflight(gw, '/v1/chat/completions', APP, { 'access-control-request-headers': 'authorization,content-type,x-stainless-os' });
    expect(asked.status).toBe(204);
    expect(Object.fromEntries([...asked.headers].filter(([k]) => k.startsWith('access-control-') || k === 'vary'))).toEqual({
      'access-control-allow-origin': APP,
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'authorization,content-type,x-stainless-os',
      'access-control-max-age': '600',
      vary: 'origin',
    });
    // Names that are not header names are not echoed: the fixed list instead.
    for (const odd of ['content-type, x a', 'x(y)', ',', 'a,,b']) {
      const r = await preflight(gw, '/v1/embeddings', APP, { 'access-control-request-headers': odd });
      expect(r.headers.get('access-control-allow-headers')).toBe('authorization, content-type, x-request-id, x-switchyard-data-class, api-key, x-api-key');
    }
    // Each route's grant is what its 405 names in Allow.
    for (const path of ['/v1/chat/completions', '/chat/completions', '/v1/embeddings', '/embeddings', '/v1/models', '/models', '/v1/models/chat', '/models/x', '/healthz', '/readyz', '/metrics', '/traces', '/traces/abc']) {
      const grant = await preflight(gw, path, APP);
      expect(grant.status, path).toBe(204);
      const plain = await send(gw, path, { method: 'OPTIONS', headers: { origin: APP } }); // no Access-Control-Request-Method: not a preflight
      expect(plain.status, path).toBe(405);
      expect(grant.headers.get('access-control-allow-methods'), path).toBe(plain.headers.get('allow'));
      expectCors(plain, APP);
      await plain.arrayBuffer();
    }
    const unknown = await preflight(gw, '/v2/nothing', APP);
    expectError(404, await unknown.json(), unknown.status, 'not_found');
    expect(upstream.hits.length).toBe(hits);
  });
});

describe('server.cors: any other origin', () => {
  it('is refused with 403 before routing: no upstream call, counted, for every route and its preflight', async () => {
    const gw = await gateway([APP]);
    const hits = upstream.hits.length;
    const before = refused.length;
    // The drive-by: a page's form or fetch POSTing text/plain, which needs no preflight.
    const driveBy = await send(gw, '/v1/chat/completions', {
      method: 'POST',
      body: chatBody('chat'),
      headers: { origin: EVIL, 'content-type': 'text/plain', 'x-request-id': 'drive-by-1' },
    });
    const e = expectError(403, await driveBy.json(), driveBy.status, 'origin_not_allowed');
    expect(e.type).toBe('permission_error');
    expect(e.message).toBe(`Origin '${EVIL}' is not allowed: add it to server.cors.origins to let that page call the gateway from a browser`);
    expectNoCors(driveBy);
    for (const [path, init] of [
      ['/v1/embeddings', { method: 'POST', body: '{"model":"chat","input":"x"}' }],
      ['/v1/models', {}],
      ['/healthz', {}],
      ['/v2/nothing', {}],
    ] as const) {
      const r = await send(gw, path, { ...init, headers: { origin: 'null' } });
      expectError(403, await r.json(), r.status, 'origin_not_allowed');
    }
    const p = await preflight(gw, '/v1/chat/completions', `${APP}.evil.example`);
    expectError(403, await p.json(), p.status, 'origin_not_allowed');
    expect(upstream.hits.length).toBe(hits);
    // Counted as refusals at the door, for the requests a routed endpoint would have taken.
    expect(refused.slice(before).map((r) => [r.endpoint, r.status, r.errorCode])).toEqual([
      ['chat', 403, 'origin_not_allowed'],
      ['embeddings', 403, 'origin_not_allowed'],
    ]);
    expect(refused[before]!.requestId).toBe('drive-by-1');
  });

  it('is refused from the headers alone, the connection closed, before any body arrives', async () => {
    const gw = await gateway([APP]);
    const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${gw.port}\r\norigin: ${EVIL}\r\ncontent-type: text/plain\r\ncontent-length: 1000\r\n\r\n`;
    const r = await rawExchange(gw.port, [head], { idleMs: 5000 });
    expect(r.clientClosed).toBe(false);
    expectError(403, JSON.parse(r.body.toString()), r.status, 'origin_not_allowed');
    expect(r.headers.connection).toBe('close');
  });
});

describe('the gateway\'s own origin', () => {
  const exchange = (gw: TestGateway, host: string, origin: string) =>
    rawExchange(gw.port, [`POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\norigin: ${origin}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${chatBody('chat').length}\r\n\r\n${chatBody('chat')}`]);

  it('is allowed with no origins configured, where its Host is an address or localhost, not a name DNS rebinding can point here', async () => {
    const gw = await gateway();
    const hits = upstream.hits.length;
    for (const host of [`127.0.0.1:${gw.port}`, `localhost:${gw.port}`, `[::1]:${gw.port}`]) {
      const own = await exchange(gw, host, `http://${host}`);
      expect(own.status, host).toBe(200);
      expect(own.headers['access-control-allow-origin']).toBe(`http://${host}`);
    }
    expect(upstream.hits.length - hits).toBe(3);
    // A page at evil.example:PORT whose name resolves to 127.0.0.1: same origin to the browser, not to the gateway.
    const rebound = await exchange(gw, `evil.example:${gw.port}`, `http://evil.example:${gw.port}`);
    expectError(403, JSON.parse(rebound.body.toString()), rebound.status, 'origin_not_allowed');
    // Another port, or https, is another origin.
    for (const origin of [`http://127.0.0.1:${gw.port + 1}`, `https://127.0.0.1:${gw.port}`]) {
      const other = await exchange(gw, `127.0.0.1:${gw.port}`, origin);
      expect(other.status, origin).toBe(403);
    }
    expect(upstream.hits.length - hits).toBe(3);
  });

  it("serves a browser extension's or app webview's own scheme when listed (chrome-extension://ID)", async () => {
    const ext = 'chrome-extension://abcdefghijklmnop';
    const gw = await gateway([ext]);
    const r = await post(gw, '/v1/chat/completions', chatBody('chat'), { origin: ext });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe(ext);
    expect((await post(gw, '/v1/chat/completions', chatBody('chat'), { origin: 'chrome-extension://other' })).status).toBe(403);
  });

  it("keeps a rebinding page from reading the traces and metrics of a loopback gateway without an admin key: a same-origin GET has no Origin, only the page's name in Host", async () => {
    const gw = await gateway();
    const get = (path: string, host: string) => rawExchange(gw.port, [`GET ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`]);
    for (const path of ['/traces', '/metrics']) {
      const rebound = await get(path, `evil.example:${gw.port}`);
      expectError(403, JSON.parse(rebound.body.toString()), rebound.status, 'host_not_allowed');
      for (const host of [`127.0.0.1:${gw.port}`, `localhost:${gw.port}`]) expect((await get(path, host)).status, `${path} ${host}`).toBe(200);
    }
    // The routes a model client uses are not in question: no Origin, any Host.
    expect((await get('/healthz', `evil.example:${gw.port}`)).status).toBe(200);
  });
});
