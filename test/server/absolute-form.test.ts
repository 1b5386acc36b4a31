/**
 * Absolute-form request targets (`POST http://host:port/v1/chat/completions`,
 * as a client configured with an HTTP proxy sends them; RFC 9112 §3.2.2 has
 * servers accept them) over a raw socket: routed on their path and query, the
 * authority ignored. They were all 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { answersCompletion, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { chatBody, expectError, rawExchange } from './wire.js';

let gw: TestGateway;
let upstream: RawUpstream;

beforeAll(async () => {
  upstream = await startRawUpstream(answersCompletion());
  gw = await startChatOver(upstream.url);
});
afterAll(async () => {
  await gw.close(0);
  await upstream.close();
});

async function exchange(method: string, target: string, body = ''): Promise<{ status: number; json: unknown; headers: Record<string, string> }> {
  const head = `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1:${gw.port}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const r = await rawExchange(gw.port, [head + body]);
  return { status: r.status, json: JSON.parse(r.body.toString()) as unknown, headers: r.headers };
}

describe('an absolute-form request target', () => {
  it('is routed on its path and query, whatever its authority; other forms still have no route', async () => {
    const chat = await exchange('POST', `http://127.0.0.1:${gw.port}/v1/chat/completions`, chatBody('chat'));
    expect(chat.status, JSON.stringify(chat.json)).toBe(200);
    expect(chat.headers['x-switchyard-deployment']).toBe('up/m');
    expect(upstream.hits).toHaveLength(1);
    // Another authority, scheme in capitals, userinfo: not read, not used to reach anything.
    const elsewhere = await exchange('POST', 'HTTPS://user:pw@upstream.example:8443/chat/completions', chatBody('chat'));
    expect(elsewhere.status, JSON.stringify(elsewhere.json)).toBe(200);
    expect(upstream.hits).toHaveLength(2);
    expect(upstream.hits.map((h) => h.url)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);

    const models = await exchange('GET', 'http://gateway.internal/v1/models');
    expect((models.json as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(['chat']);
    expect((await exchange('GET', 'http://gateway.internal/v1/models/chat')).status).toBe(200);
    // The query survives: a bad filter is named.
    const traces = await exchange('GET', 'http://gateway.internal/traces?limit=nope');
    expectError(400, traces.json, traces.status, 'invalid_request');
    expect((await exchange('GET', 'http://gateway.internal/traces?limit=1')).status).toBe(200);
    // No path at all is `/`: no route, as for an origin-form `/`.
    const root = await exchange('GET', 'http://gateway.internal');
    expect(expectError(404, root.json, root.status, 'not_found').message).toBe('No route for /');
    const rootQuery = await exchange('GET', 'http://gateway.internal?x=1');
    expect(expectError(404, rootQuery.json, rootQuery.status, 'not_found').message).toBe('No route for /');
    // Neither origin nor absolute http(s) form, past node's parser: still no route.
    for (const target of ['*', 'ftp://gateway.internal/v1/models']) {
      const r = await exchange('GET', target);
      expect(expectError(404, r.json, r.status, 'not_found').message).toBe(`No route for ${target}`);
    }
  });
});
