/**
 * An error answer to a request without a body (a GET to an unknown route or model, a
 * wrong key, a wrong method) keeps its connection open, as any other answer does. The
 * close meant for answers sent before a body arrived took these too — node has not
 * marked a bodyless request complete while its handler runs — so every refused GET cost
 * the client a new connection, and requests pipelined behind it went unanswered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { parseRaw, rawExchange } from './wire.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway(
    {
      providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0 } }],
      models: [{ name: 'fast', deployments: [{ provider: 'sim', model: 'sim-mini' }] }],
      keys: [{ id: 'k', key: '${K}' }],
    },
    { env: { K: 'sk-right' } },
  );
});
afterAll(() => gw.close(0));

const request = (method: string, path: string, extra = '') => `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer sk-right\r\n${extra}\r\n`;

/** The responses of one connection, in order; `bodiless[i]`: the i-th answers a HEAD (a length, no body). */
function responses(raw: Buffer, bodiless: boolean[]): { status: number; connection: string | undefined }[] {
  const out: { status: number; connection: string | undefined }[] = [];
  let rest = raw;
  while (rest.length > 0) {
    const r = parseRaw(rest);
    if (r.status === 0) break;
    out.push({ status: r.status, connection: r.headers.connection?.toLowerCase() });
    rest = rest.subarray(r.head.length + 4 + (bodiless[out.length - 1] ? 0 : r.body.length));
  }
  return out;
}

describe('an error answer to a request without a body', () => {
  it('keeps the connection: each refusal and the request pipelined behind it are answered on one socket', async () => {
    const refused: [string, number][] = [
      [request('GET', '/v2/nothing'), 404],
      [request('DELETE', '/v1/models'), 405],
      [request('HEAD', '/v1/chat/completions'), 405],
      [request('GET', '/v1/models/ghost'), 404],
      [request('GET', '/v1/models/%E9'), 400],
      [request('GET', '/v1/models', 'content-length: 0\r\n').replace('sk-right', 'sk-wrong'), 401],
    ];
    const healthz = request('GET', '/healthz');
    const parts = refused.flatMap(([r]) => [r, healthz]);
    parts[parts.length - 1] = request('GET', '/healthz', 'connection: close\r\n');
    // All in one write: a close after any refusal leaves the rest unanswered.
    const r = await rawExchange(gw.port, [parts.join('')], { idleMs: 5000 });
    expect(r.clientClosed).toBe(false);
    const got = responses(r.raw, parts.map((p) => p.startsWith('HEAD ')));
    expect(got.map((g) => g.status)).toEqual(refused.flatMap(([, status]) => [status, 200]));
    expect(got.slice(0, -1).every((g) => g.connection === 'keep-alive')).toBe(true);
  });

  it('a request declaring a body is still answered early with the connection closed', async () => {
    const r = await rawExchange(gw.port, [request('POST', '/v1/chat/completions', 'content-length: 100\r\n').replace('sk-right', 'sk-wrong')], { idleMs: 5000 });
    expect(r.clientClosed).toBe(false);
    expect(r.status).toBe(401);
    expect(r.headers.connection).toBe('close');
  });
});
