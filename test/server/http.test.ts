/**
 * The HTTP surface over a real socket: auth, the contract's error statuses and
 * shape, the routes, the routing headers, request ids, and a client leaving
 * mid-stream releasing the upstream.
 */
import { createServer as createTcpServer, connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, openaiProvider, type TestGateway } from '../helpers/gateway.js';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import { chatBody, expectError, isErrorShape, readUntil, sseData } from './wire.js';

const KEYS = { TEAM_A_KEY: 'sk-team-a-0123456789', TEAM_B_KEY: 'sk-team-b-0123456789', ADMIN_KEY: 'sk-admin-0123456789' };
const MAX_BODY = 64 * 1024;
const SIM = { latencyMs: 0, ttftMs: 0, tokensPerSecond: 1000 };

let gw: TestGateway;
let url: string;

beforeAll(async () => {
  gw = await startGateway(
    {
      server: { maxBodyBytes: MAX_BODY, adminKey: '${ADMIN_KEY}' },
      providers: [{ id: 'sim', type: 'simulated', simulate: SIM }],
      models: [
        { name: 'fast', deployments: [{ provider: 'sim', model: 'sim-mini' }] },
        { name: 'smart', deployments: [{ provider: 'sim', model: 'sim-large' }] },
      ],
      auto: { tiers: ['fast', 'smart'] },
      keys: [
        { id: 'team-a', key: '${TEAM_A_KEY}', models: ['fast'] },
        { id: 'team-b', key: '${TEAM_B_KEY}' },
      ],
    },
    { env: KEYS },
  );
  url = gw.url;
});
afterAll(() => gw.close(0));

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const A = bearer(KEYS.TEAM_A_KEY);
const B = bearer(KEYS.TEAM_B_KEY);

async function post(path: string, body: string | Uint8Array, headers: Record<string, string> = B): Promise<{ status: number; body: unknown; headers: Headers }> {
  const r = await fetch(url + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: left as text for the assertion message
  }
  return { status: r.status, body: parsed, headers: r.headers };
}

async function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const r = await fetch(url + path, { method, headers });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // metrics are text
  }
  return { status: r.status, body: parsed, text, headers: r.headers };
}

describe('authentication', () => {
  it('refuses a missing or wrong key with 401 invalid_api_key', async () => {
    const variants: Array<Record<string, string>> = [{}, bearer('sk-wrong'), { 'x-api-key': 'sk-wrong' }, { authorization: 'Basic abc' }, { authorization: 'Bearer' }];
    for (const headers of variants) {
      const r = await post('/v1/chat/completions', chatBody(), headers);
      expectError(401, r.body, r.status, 'invalid_api_key');
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
    const models = await get('/v1/models');
    expectError(401, models.body, models.status, 'invalid_api_key');
  });

  it('accepts the key as Bearer and as x-api-key (keys from ${VAR})', async () => {
    expect((await post('/v1/chat/completions', chatBody(), B)).status).toBe(200);
    expect((await post('/v1/chat/completions', chatBody(), { 'x-api-key': KEYS.TEAM_B_KEY })).status).toBe(200);
    expect((await post('/v1/chat/completions', chatBody(), { authorization: `bearer   ${KEYS.TEAM_A_KEY}` })).status).toBe(200);
  });

  it('403 model_not_allowed when the key may not use the alias', async () => {
    const r = await post('/v1/chat/completions', chatBody('smart'), A);
    expectError(403, r.body, r.status, 'model_not_allowed');
    expect((await post('/v1/chat/completions', chatBody('smart'), B)).status).toBe(200);
    // A pinned model of a configured provider is one the key may not use either.
    const pinned = await post('/v1/chat/completions', chatBody('sim/sim-mini'), A);
    expectError(403, pinned.body, pinned.status, 'model_not_allowed');
  });

  it('404 model_not_found, not 403, for a model that does not exist, whatever the key may use', async () => {
    for (const model of ['nope', 'ghost/sim-mini']) {
      const r = await post('/v1/chat/completions', chatBody(model), A);
      expectError(404, r.body, r.status, 'model_not_found');
    }
  });
});

describe('errors', () => {
  it('404 model_not_found for an unknown alias or provider', async () => {
    for (const model of ['nope', 'ghost/sim-mini', 'sim/']) {
      const r = await post('/v1/chat/completions', chatBody(model));
      expectError(404, r.body, r.status, 'model_not_found');
    }
  });

  it('404 for an unknown route, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const r = await get('/v2/nothing', {}, method);
      expectError(404, r.body, r.status, 'not_found');
    }
  });

  it('405 with Allow for a wrong method on a known route', async () => {
    const r = await get('/v1/chat/completions', B);
    expectError(405, r.body, r.status, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('POST');
    const m = await get('/v1/models', B, 'DELETE');
    expectError(405, m.body, m.status, 'method_not_allowed');
    expect(m.headers.get('allow')).toBe('GET, HEAD');
    const e = await get('/v1/embeddings', B, 'PUT');
    expectError(405, e.body, e.status, 'method_not_allowed');
  });

  it('413 payload_too_large for a declared body over maxBodyBytes, then closes the connection', async () => {
    const big = chatBody('fast', { pad: 'x'.repeat(MAX_BODY) });
    const r = await post('/v1/chat/completions', big);
    expectError(413, r.body, r.status, 'payload_too_large');
    // The next request (new connection) still works.
    expect((await post('/v1/chat/completions', chatBody())).status).toBe(200);
  });

  it('413 for a chunked body without content-length as soon as it crosses the bound', async () => {
    let sent = 0;
    async function* body() {
      yield Buffer.from('{"model":"fast","messages":[{"role":"user","content":"');
      // Far more than the bound: the server must answer without waiting for all of it.
      for (let i = 0; i < 2000; i++) {
        sent += 1024;
        yield Buffer.alloc(1024, 'a');
      }
      yield Buffer.from('"}]}');
    }
    const r = await request(url + '/v1/chat/completions', { method: 'POST', body: Readable.from(body()), headers: B });
    const parsed: unknown = await r.body.json();
    expectError(413, parsed, r.statusCode, 'payload_too_large');
    expect(r.headers.connection).toBe('close');
    expect(sent).toBeGreaterThan(MAX_BODY);
  });

  const MALFORMED: Array<[string, string | Buffer, string | null]> = [
    ['empty body', '', null],
    ['not JSON', 'hello', null],
    ['truncated JSON', '{"model":"fast","messages":[{"role":', null],
    ['a JSON array', '[]', null],
    ['a JSON string', '"fast"', null],
    ['missing model', '{"messages":[{"role":"user","content":"x"}]}', 'model'],
    ['model a number', '{"model":3,"messages":[{"role":"user","content":"x"}]}', 'model'],
    ['model empty', '{"model":"","messages":[{"role":"user","content":"x"}]}', 'model'],
    ['missing messages', '{"model":"fast"}', 'messages'],
    ['messages empty', '{"model":"fast","messages":[]}', 'messages'],
    ['messages an object', '{"model":"fast","messages":{"role":"user"}}', 'messages'],
    ['message a string', '{"model":"fast","messages":["hi"]}', 'messages[0]'],
    ['unknown role', '{"model":"fast","messages":[{"role":"wizard","content":"x"}]}', 'messages[0].role'],
    ['content a number', '{"model":"fast","messages":[{"role":"user","content":5}]}', 'messages[0].content'],
    ['content part without type', '{"model":"fast","messages":[{"role":"user","content":[{"text":"x"}]}]}', 'messages[0].content[0]'],
    ['tool message without id', '{"model":"fast","messages":[{"role":"tool","content":"x"}]}', 'messages[0].tool_call_id'],
    ['stream a string', chatBody('fast', { stream: 'yes' }), 'stream'],
    ['stream_options a string', chatBody('fast', { stream: true, stream_options: 'all' }), 'stream_options'],
    ['temperature a string', chatBody('fast', { temperature: 'hot' }), 'temperature'],
    ['temperature out of range', chatBody('fast', { temperature: 7 }), 'temperature'],
    ['max_tokens negative', chatBody('fast', { max_tokens: -1 }), 'max_tokens'],
    ['max_tokens fractional', chatBody('fast', { max_tokens: 1.5 }), 'max_tokens'],
    ['tools an object', chatBody('fast', { tools: { type: 'function' } }), 'tools'],
    ['tool without a function name', chatBody('fast', { tools: [{ type: 'function', function: {} }] }), 'tools[0]'],
    ['response_format a string', chatBody('fast', { response_format: 'json' }), 'response_format'],
    ['invalid UTF-8', Buffer.concat([Buffer.from('{"model":"fast","messages":[{"role":"user","content":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}]}')]), null],
    ['nested 1000 levels deep', chatBody('fast', { extra: JSON.parse('['.repeat(1000) + ']'.repeat(1000)) }), null],
    ['nested tools schema 20000 deep', `{"model":"fast","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":${'['.repeat(20000)}${']'.repeat(20000)}}}]}`, null],
    ['a NUL-laden non-JSON', '\u0000\u0000{"model"', null],
  ];

  it.each(MALFORMED)('400 invalid_request for a chat body with %s', async (_name, body, param) => {
    const r = await post('/v1/chat/completions', body);
    const e = expectError(400, r.body, r.status, 'invalid_request');
    if (param !== null) expect(e.param).toBe(param);
  });

  it('400 for malformed embeddings bodies', async () => {
    for (const body of [
      '{"model":"fast"}',
      '{"model":"fast","input":""}',
      '{"model":"fast","input":[]}',
      '{"model":"fast","input":[1,"a"]}',
      '{"model":"fast","input":{"text":"a"}}',
      '{"model":"fast","input":"a","dimensions":-3}',
      '{"input":"a"}',
    ]) {
      const r = await post('/v1/embeddings', body);
      expectError(400, r.body, r.status, 'invalid_request');
    }
    const ok = await post('/v1/embeddings', '{"model":"fast","input":["a","b"]}');
    expect(ok.status).toBe(200);
    expect((ok.body as { data: unknown[] }).data).toHaveLength(2);
  });

  it('400 for an x-switchyard-data-class that is not a class', async () => {
    for (const dc of ['secret', 'PUBLIC!', 'x'.repeat(100), 'constructor', '__proto__', 'toString']) {
      const r = await post('/v1/chat/completions', chatBody(), { ...B, 'x-switchyard-data-class': dc });
      const e = expectError(400, r.body, r.status, 'invalid_request');
      expect(e.param).toBe('x-switchyard-data-class');
    }
    expect((await post('/v1/chat/completions', chatBody(), { ...B, 'x-switchyard-data-class': 'Public' })).status).toBe(200);
  });

  it('400 for x-switchyard-data-class sent on two lines: neither line alone decides (the in-process API reads a list the same way)', async () => {
    for (const lines of [['restricted', 'public'], ['public', 'restricted'], ['restricted', 'restricted']]) {
      const headers = ['authorization', B.authorization, 'content-type', 'application/json', ...lines.flatMap((v) => ['x-switchyard-data-class', v])];
      const r = await request(`${url}/v1/chat/completions`, { method: 'POST', body: chatBody(), headers });
      const e = expectError(400, await r.body.json(), r.statusCode, 'invalid_request');
      expect(e.param).toBe('x-switchyard-data-class');
    }
  });
});

describe('hostile message shapes', () => {
  // Client-shaped data that adapters and token estimates iterate: it must stop at the
  // edge as a 400, never reach a provider and come back as a TypeError, which the
  // executor takes for an upstream failure (retries, breaker trips, a 503 for everyone).
  let own: TestGateway;
  beforeAll(async () => {
    own = await startGateway({
      providers: [{ id: 'sim', type: 'simulated', simulate: SIM }],
      models: [{ name: 'fast', deployments: [{ provider: 'sim', model: 'sim-mini' }] }],
    });
  });
  afterAll(() => own.close(0));

  const HOSTILE: Array<[string, string, string]> = [
    ['tool_calls a string on a user message', '{"model":"fast","messages":[{"role":"user","content":"x","tool_calls":"text"}]}', 'messages[0].tool_calls'],
    ['tool_calls an object on a user message', '{"model":"fast","messages":[{"role":"user","content":"x","tool_calls":{"a":1}}]}', 'messages[0].tool_calls'],
    ['assistant tool_calls without a function', '{"model":"fast","messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":[{}]},{"role":"user","content":"y"}]}', 'messages[1].tool_calls'],
  ];

  it.each(HOSTILE)('400 invalid_request for %s', async (_name, body, param) => {
    const r = await fetch(`${own.url}/v1/chat/completions`, { method: 'POST', body });
    const e = expectError(400, await r.json(), r.status, 'invalid_request');
    expect(e.param ?? '').toMatch(new RegExp(`^${param.replace(/[[\]]/g, '\\$&')}`));
  });

  it('a burst of them does not make the alias unavailable to other clients', async () => {
    for (let i = 0; i < 10; i++) {
      const [, body] = HOSTILE[i % HOSTILE.length]!;
      const r = await fetch(`${own.url}/v1/chat/completions`, { method: 'POST', body });
      expect(r.status).toBeLessThan(500);
      await r.text();
    }
    const ok = await fetch(`${own.url}/v1/chat/completions`, { method: 'POST', body: chatBody() });
    expect(ok.status).toBe(200);
  });
});

describe('routes', () => {
  it('GET /v1/models lists the aliases and auto in the OpenAI list shape', async () => {
    const r = await get('/v1/models', B);
    expect(r.status).toBe(200);
    const list = r.body as { object: string; data: Array<{ id: string; object: string; owned_by: string }> };
    expect(list.object).toBe('list');
    expect(list.data.map((m) => m.id).sort()).toEqual(['auto', 'fast', 'smart']);
    for (const m of list.data) expect(m.object).toBe('model');
    // HEAD is a GET without a body.
    const head = await fetch(url + '/v1/models', { method: 'HEAD', headers: B });
    expect(head.status).toBe(200);
  });

  it('GET /v1/models shows a key limited to some models only those, and GET /v1/models/{id} retrieves one', async () => {
    const limited = (await get('/v1/models', A)).body as { data: { id: string }[] };
    expect(limited.data.map((m) => m.id)).toEqual(['fast']);
    const one = await get('/v1/models/fast', A);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: 'fast', object: 'model', owned_by: 'switchyard' });
    expect((await get('/models/smart', B)).body).toMatchObject({ id: 'smart' });
    // What the key may not use, or what does not exist: not found, in OpenAI's shape.
    for (const [path, headers] of [['/v1/models/smart', A], ['/v1/models/nope', B], ['/v1/models/sim%2Fsim-mini', B]] as const) {
      const r = await get(path, headers);
      expect(r.status, path).toBe(404);
      expect((r.body as { error: { code: string } }).error.code).toBe('model_not_found');
    }
    expect((await get('/v1/models/fast')).status).toBe(401);
  });

  it('/healthz and /readyz answer without a key', async () => {
    const h = await get('/healthz');
    expect(h.status).toBe(200);
    expect(h.body).toEqual({ status: 'ok' });
    const r = await get('/readyz');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'ready', config: 'loaded', ok: true });
  });

  it('the admin key guards /traces and /metrics; client keys do not open them', async () => {
    for (const path of ['/traces', '/metrics', '/traces/some-id']) {
      const anonymous = await get(path);
      expectError(401, anonymous.body, anonymous.status, 'invalid_api_key');
      const withClientKey = await get(path, B);
      expectError(401, withClientKey.body, withClientKey.status, 'invalid_api_key');
    }
    const admin = bearer(KEYS.ADMIN_KEY);
    const traces = await get('/traces', admin);
    expect(traces.status).toBe(200);
    expect((traces.body as { object: string }).object).toBe('list');
    const metrics = await get('/metrics', { 'x-api-key': KEYS.ADMIN_KEY });
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/text\/plain/);
    expect(metrics.text).toMatch(/^switchyard_/m);
    const missing = await get('/traces/no-such-trace', admin);
    expectError(404, missing.body, missing.status);
    const badEscape = await get('/traces/%E0%A4%A', admin);
    expectError(400, badEscape.body, badEscape.status, 'invalid_request');
  });
});

describe('routing headers and request ids', () => {
  const ROUTING = ['x-request-id', 'x-switchyard-deployment', 'x-switchyard-selection', 'x-switchyard-attempts', 'x-switchyard-fallback', 'x-switchyard-overhead-ms'];

  it('are on a buffered response', async () => {
    const r = await post('/v1/chat/completions', chatBody());
    expect(r.status).toBe(200);
    for (const h of ROUTING) expect(r.headers.get(h), h).toBeTruthy();
    expect(r.headers.get('x-switchyard-deployment')).toBe('sim/sim-mini');
    expect(r.headers.get('x-switchyard-attempts')).toBe('1');
    expect(r.headers.get('x-switchyard-fallback')).toBe('false');
    expect(Number(r.headers.get('x-switchyard-overhead-ms'))).toBeGreaterThanOrEqual(0);
  });

  it('name a pinned model a header cannot carry percent-encoded, its / kept; a lone surrogate no 500', async () => {
    const r = await post('/v1/chat/completions', JSON.stringify({ model: 'sim/mödel', messages: [{ role: 'user', content: 'hi' }] }));
    expect(r.status).toBe(200);
    expect(r.headers.get('x-switchyard-deployment')).toBe('sim/m%C3%B6del');
    const lone = await post('/v1/chat/completions', '{"model":"sim/x\\ud800","messages":[{"role":"user","content":"hi"}]}');
    expect(lone.status).toBe(200);
    expect(lone.headers.get('x-switchyard-deployment')).toBe('sim/x%EF%BF%BD');
  });

  it('are on a streamed response, which ends with [DONE]', async () => {
    const r = await fetch(url + '/v1/chat/completions', { method: 'POST', headers: B, body: chatBody('fast', { stream: true }) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    for (const h of ROUTING) expect(r.headers.get(h), h).toBeTruthy();
    expect(r.headers.get('x-switchyard-deployment')).toBe('sim/sim-mini');
    const data = sseData(await r.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { model: string });
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c.model).toBe('sim-mini');
  });

  it('echo a valid x-request-id (also on errors) and record the trace under it', async () => {
    const id = 'req-abc_123.4:5';
    const r = await post('/v1/chat/completions', chatBody(), { ...B, 'x-request-id': id });
    expect(r.headers.get('x-request-id')).toBe(id);
    const err = await post('/v1/chat/completions', '{', { ...B, 'x-request-id': 'err-1' });
    expect(err.status).toBe(400);
    expect(err.headers.get('x-request-id')).toBe('err-1');
    const t = await get(`/traces/${id}`, bearer(KEYS.ADMIN_KEY));
    expect(t.status).toBe(200);
    expect((t.body as { id: string }).id).toBe(id);
  });

  it('generate one when x-request-id is missing or invalid, the same one in the trace', async () => {
    for (const bad of [undefined, 'has spaces', 'x'.repeat(129), 'semi;colon', '', '.', '..']) {
      const headers: Record<string, string> = { ...B };
      if (bad !== undefined) headers['x-request-id'] = bad;
      const r = await post('/v1/chat/completions', chatBody(), headers);
      const id = r.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const t = await get(`/traces/${id}`, bearer(KEYS.ADMIN_KEY));
      expect(t.status).toBe(200);
    }
    // On an error response too: a generated id, never the invalid one echoed.
    const err = await post('/v1/chat/completions', '{', { ...B, 'x-request-id': 'bad id' });
    expect(err.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a client leaving mid-stream', () => {
  let fault: FaultServer;
  let proxyClosed: Array<Promise<unknown>>;
  let proxy: ReturnType<typeof createTcpServer>;
  let slow: TestGateway;
  const LONG_REPLY = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');

  beforeAll(async () => {
    // 400 pieces at 50 a second: an 8 s stream, unless somebody stops it.
    fault = await startFaultServer({ simulate: { tokensPerSecond: 50, reply: LONG_REPLY } });
    // A TCP proxy in front of the fault server, to watch the gateway's upstream sockets close.
    proxyClosed = [];
    proxy = createTcpServer((inbound: Socket) => {
      const outbound = connect(fault.port, '127.0.0.1');
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
      proxyClosed.push(new Promise((resolve) => inbound.on('close', resolve)));
    });
    proxy.listen(0, '127.0.0.1');
    await once(proxy, 'listening');
    const port = (proxy.address() as { port: number }).port;
    slow = await startGateway({
      providers: [openaiProvider('up', `http://127.0.0.1:${port}/v1`), { id: 'sim', type: 'simulated', simulate: { ...SIM, tokensPerSecond: 20, reply: LONG_REPLY } }],
      models: [
        { name: 'remote', deployments: [{ provider: 'up', model: 'm' }] },
        { name: 'local', deployments: [{ provider: 'sim', model: 'm' }] },
      ],
    });
  });
  afterAll(async () => {
    await slow.close(0);
    await fault.close();
    proxy.close();
  });

  it('aborts the upstream request: its socket closes long before the stream would end', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const r = await fetch(slow.url + '/v1/chat/completions', { method: 'POST', body: chatBody('remote', { stream: true }), signal: ac.signal });
    expect(r.status).toBe(200);
    await readUntil(r.body!, (t) => sseData(t).length >= 3);
    expect(proxyClosed).toHaveLength(1);
    ac.abort();
    await proxyClosed[0];
    expect(Date.now() - started).toBeLessThan(4000);
    // The gateway is fine and the trace says the client left.
    await expect.poll(() => slow.observability.traces.query({ limit: 10 }).length).toBe(1);
    const [trace] = slow.observability.traces.query({ limit: 10 });
    expect(trace!.stream).toBe(true);
    expect(slow.server.inFlight).toBe(0);
  });

  it('stops the in-process simulated stream (no more chunks generated, the request is recorded)', async () => {
    const before = slow.observability.traces.query({ limit: 100 }).length;
    const ac = new AbortController();
    const r = await fetch(slow.url + '/v1/chat/completions', { method: 'POST', body: chatBody('local', { stream: true }), signal: ac.signal });
    await readUntil(r.body!, (t) => sseData(t).length >= 2);
    ac.abort();
    // The stream would take 20 s; the trace is written when the LiveStream ends.
    await expect.poll(() => slow.observability.traces.query({ limit: 100 }).length, { timeout: 2000 }).toBe(before + 1);
    await expect.poll(() => slow.server.inFlight).toBe(0);
  });
});

it('a valid request still works after all of the above (sanity)', async () => {
  const r = await post('/v1/chat/completions', chatBody());
  expect(r.status).toBe(200);
  expect(isErrorShape(r.body)).toBe(false);
});
