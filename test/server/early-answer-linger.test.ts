/**
 * An answer sent before the request's body arrived (a 413 from the declared length,
 * a 401 from the headers) closes the connection, lingering: what the client still
 * uploads is read and dropped, so it reads the answer rather than a reset. node's
 * own close destroyed the socket with the body still arriving, and the client saw
 * EPIPE or ECONNRESET (from another process, most of the time instead of the 413).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { answersCompletion, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { expectError, rawExchange } from './wire.js';

const MAX_BODY = 64 * 1024;
/** Far more than the socket buffers take: still arriving when the answer goes out. */
const UPLOAD = Buffer.alloc(8 << 20, 0x61);
let gw: TestGateway;
let upstream: RawUpstream;

beforeAll(async () => {
  upstream = await startRawUpstream(answersCompletion());
  gw = await startGateway(
    {
      server: { maxBodyBytes: MAX_BODY },
      providers: [{ id: 'up', type: 'openai', baseUrl: upstream.url }],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
      keys: [{ id: 'k', key: '${K}' }],
    },
    { env: { K: 'sk-right' } },
  );
});
afterAll(async () => {
  await gw.close(0);
  await upstream.close();
});

const head = (extra: string) =>
  `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${UPLOAD.length}\r\n${extra}\r\n`;

describe('an answer before the body arrived', () => {
  it('413 from the declared length: the uploading client reads it, no reset, and the server closes', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await rawExchange(gw.port, [head('authorization: Bearer sk-right\r\n'), UPLOAD], { idleMs: 5000 });
      expect(r.error).toBeUndefined();
      expect(r.clientClosed).toBe(false);
      expect(r.headers.connection).toBe('close');
      expectError(413, JSON.parse(r.body.toString()), r.status, 'payload_too_large');
    }
  });

  it('401 from the headers: the same', async () => {
    const r = await rawExchange(gw.port, [head('authorization: Bearer sk-wrong\r\n'), UPLOAD], { idleMs: 5000 });
    expect(r.error).toBeUndefined();
    expect(r.clientClosed).toBe(false);
    expectError(401, JSON.parse(r.body.toString()), r.status, 'invalid_api_key');
  });

  it('a client that sends only the head still has its connection closed at once', async () => {
    const started = Date.now();
    const r = await rawExchange(gw.port, [head('authorization: Bearer sk-right\r\n')], { idleMs: 5000 });
    expect(r.clientClosed).toBe(false);
    expect(r.status).toBe(413);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(gw.server.inFlight).toBe(0);
  });
});
