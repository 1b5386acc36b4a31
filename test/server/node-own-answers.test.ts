/**
 * Requests node answers by itself unless told otherwise, over a raw socket: an HTTP/1.1
 * request without Host (400), an `Expect` other than 100-continue (417), and CONNECT (a
 * client whose HTTPS_PROXY names the gateway). node answered the first two with an empty
 * body and cut the third without a word; each now gets the contract's error JSON and a
 * closed connection, and the gateway goes on serving.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chatBody, expectError, rawExchange } from './wire.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startGateway({
    providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0 } }],
    models: [{ name: 'fast', deployments: [{ provider: 'sim', model: 'sim-mini' }] }],
  });
});
afterAll(() => gw.close(0));

const BODY = chatBody('fast');

async function answer(request: string): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
  const r = await rawExchange(gw.port, [request], { idleMs: 5000 });
  expect(r.clientClosed, r.head).toBe(false); // the server closed it
  expect(r.headers.connection).toBe('close');
  return { status: r.status, body: JSON.parse(r.body.toString()), headers: r.headers };
}

describe('what node would answer by itself', () => {
  it('an HTTP/1.1 request without Host: 400 invalid_request saying so; HTTP/1.0 needs none', async () => {
    const r = await answer(`POST /v1/chat/completions HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`);
    expect(expectError(400, r.body, r.status, 'invalid_request').message).toBe('HTTP/1.1 requests need a Host header');
    const old = await rawExchange(gw.port, [`POST /v1/chat/completions HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`]);
    expect(old.status, old.head).toBe(200);
  });

  it('an Expect other than 100-continue: 417 expectation_failed, the body never read', async () => {
    const r = await answer(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nexpect: 200-ok\r\ncontent-length: ${BODY.length}\r\n\r\n`);
    expect(expectError(417, r.body, r.status, 'expectation_failed').message).toBe("Only 'Expect: 100-continue' is supported");
  });

  it('CONNECT: 405 method_not_allowed with Allow, not a cut connection', async () => {
    const r = await answer('CONNECT api.openai.com:443 HTTP/1.1\r\nhost: api.openai.com:443\r\n\r\n');
    expect(expectError(405, r.body, r.status, 'method_not_allowed').message).toContain('not a proxy');
    expect(r.headers.allow).toBe('GET, HEAD, POST');
  });

  it('CONNECT from clients that reset the connection under the answer does not bring the gateway down', async () => {
    for (let i = 0; i < 100; i++) {
      const s = connect(gw.port, '127.0.0.1');
      s.on('error', () => {});
      await once(s, 'connect');
      // More than the answer: the reset comes while the server writes it.
      s.write(`CONNECT a:443 HTTP/1.1\r\nhost: a:443\r\n\r\n${'x'.repeat(100_000)}`);
      s.resetAndDestroy();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });

  it('the gateway goes on serving', async () => {
    const r = await fetch(`${gw.url}/healthz`);
    expect(r.status).toBe(200);
    expect(gw.server.inFlight).toBe(0);
  });
});
