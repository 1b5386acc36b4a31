/**
 * `Expect: 100-continue` over a raw socket, as curl sends it for large bodies:
 * a declared body over `server.maxBodyBytes` gets its 413 at once, with no
 * `100 Continue` first (node wrote one by itself, and the client uploaded the
 * whole body to be refused), counted like any 413; a body within the bound
 * gets `100 Continue`, then its answer.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RefusedEvent } from '../../src/observability/events.js';
import { startChatCountingRefusals, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { answersCompletion, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { chatBody, expectError, parseRaw } from './wire.js';

const MAX_BODY = 4096;
let gw: TestGateway;
let upstream: RawUpstream;
const refused: RefusedEvent[] = [];

beforeAll(async () => {
  upstream = await startRawUpstream(answersCompletion());
  gw = await startChatCountingRefusals(upstream.url, { server: { maxBodyBytes: MAX_BODY } }, refused);
});
afterAll(async () => {
  await gw.close(0);
  await upstream.close();
});

/**
 * As a client honouring Expect: the head, then the body only once `100 Continue`
 * arrived. Everything received until the server closes (the request asks it to).
 */
function expectContinue(body: string, requestId: string, port = gw.port, extraHead = ''): Promise<{ text: string; sentBody: boolean }> {
  const head =
    `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\nexpect: 100-continue\r\n${extraHead}` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let sentBody = false;
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      if (!sentBody && Buffer.concat(chunks).toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        sentBody = true;
        socket.write(body);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), sentBody }));
  });
}

describe('Expect: 100-continue', () => {
  it('a declared body over the bound gets 413 without 100 Continue; one within gets 100, then its answer', async () => {
    const before = refused.length;
    const over = await expectContinue(chatBody('chat', { pad: 'x'.repeat(MAX_BODY) }), 'expect-over-1');
    expect(over.text.startsWith('HTTP/1.1 413 '), over.text.slice(0, 80)).toBe(true);
    expect(over.text).not.toContain('100 Continue');
    expect(over.sentBody).toBe(false);
    const r = parseRaw(Buffer.from(over.text, 'latin1'));
    expectError(413, JSON.parse(r.body.toString()), r.status, 'payload_too_large');
    expect(r.headers.connection).toBe('close');
    expect(r.headers['x-request-id']).toBe('expect-over-1');
    // Counted and logged as any 413.
    expect(refused.slice(before).map((e) => [e.requestId, e.endpoint, e.status, e.errorCode])).toEqual([['expect-over-1', 'chat', 413, 'payload_too_large']]);
    expect(upstream.hits).toHaveLength(0);

    const within = await expectContinue(chatBody('chat'), 'expect-within-1');
    expect(within.sentBody).toBe(true);
    expect(within.text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 '), within.text.slice(0, 80)).toBe(true);
    const ok = parseRaw(Buffer.from(within.text.slice('HTTP/1.1 100 Continue\r\n\r\n'.length), 'latin1'));
    expect(ok.headers['x-switchyard-deployment']).toBe('up/m');
    expect((JSON.parse(ok.body.toString()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('hi');
    expect(upstream.hits).toHaveLength(1);
  });

  it('a request refused from its headers (a wrong key) is answered without 100 Continue: the body is never uploaded', async () => {
    const keyed = await startChatOver(upstream.url, { keys: [{ id: 'k', key: '${K}' }] }, {}, { env: { K: 'sk-right-0123456789' } });
    try {
      const wrong = await expectContinue(chatBody('chat'), 'expect-key-1', keyed.port, 'authorization: Bearer sk-wrong\r\n');
      expect(wrong.sentBody).toBe(false);
      expect(wrong.text.startsWith('HTTP/1.1 401 '), wrong.text.slice(0, 80)).toBe(true);
      const right = await expectContinue(chatBody('chat'), 'expect-key-2', keyed.port, 'authorization: Bearer sk-right-0123456789\r\n');
      expect(right.sentBody).toBe(true);
      expect(right.text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 '), right.text.slice(0, 80)).toBe(true);
    } finally {
      await keyed.close(0);
    }
  });
});
