/**
 * A compressed request body over a real socket: 415 `unsupported_media_type`
 * naming the coding (it was a misleading 400 "not valid UTF-8"), answered from
 * the headers alone with the connection closed, counted as a refusal at the
 * door, no upstream call. `identity` is no encoding and is served. The same for
 * a compressing transfer coding before `chunked` (`Transfer-Encoding: gzip, chunked`).
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RefusedEvent } from '../../src/observability/events.js';
import { startChatCountingRefusals, type TestGateway } from '../helpers/gateway.js';
import { answersCompletion, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { chatBody, expectError, rawExchange } from './wire.js';

let gw: TestGateway;
let upstream: RawUpstream;
const refused: RefusedEvent[] = [];

beforeAll(async () => {
  upstream = await startRawUpstream(answersCompletion());
  gw = await startChatCountingRefusals(upstream.url, {}, refused);
});
afterAll(async () => {
  await gw.close(0);
  await upstream.close();
});

const BODY = chatBody('chat');

async function post(path: string, body: Uint8Array | string, encoding: string): Promise<{ status: number; body: unknown; headers: Headers }> {
  const r = await fetch(`${gw.baseURL}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-encoding': encoding } });
  return { status: r.status, body: await r.json(), headers: r.headers };
}

describe('a request body with a content-encoding', () => {
  it('is refused with 415 naming the coding, counted, and never sent upstream', async () => {
    const cases: [string, string, Uint8Array | string][] = [
      ['/chat/completions', 'gzip', gzipSync(BODY)],
      ['/chat/completions', 'br', brotliCompressSync(BODY)],
      ['/chat/completions', 'deflate', deflateSync(BODY)],
      ['/chat/completions', 'GZIP', gzipSync(BODY)],
      // A list is applied in order: any coding in it but identity leaves bytes the gateway cannot read.
      ['/chat/completions', 'identity, gzip', gzipSync(BODY)],
      ['/embeddings', 'zstd', JSON.stringify({ model: 'chat', input: 'x' })],
    ];
    const before = refused.length;
    for (const [path, encoding, body] of cases) {
      const r = await post(path, body, encoding);
      const e = expectError(415, r.body, r.status, 'unsupported_media_type');
      expect(e.type).toBe('invalid_request_error');
      const coding = encoding.split(',').at(-1)!.trim().toLowerCase();
      expect(e.message).toBe(`Content-Encoding '${coding}' is not supported: the gateway takes uncompressed JSON request bodies`);
      expect(r.headers.get('x-request-id')).toBeTruthy();
    }
    expect(upstream.hits).toHaveLength(0);
    // identity is no encoding at all: served.
    for (const encoding of ['identity', 'Identity', ' identity , identity ']) {
      const r = await post('/chat/completions', BODY, encoding);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    expect(upstream.hits).toHaveLength(3);
    expect(refused.slice(before).map((e) => [e.endpoint, e.status, e.errorCode])).toEqual(
      cases.map(([path]) => [path === '/embeddings' ? 'embeddings' : 'chat', 415, 'unsupported_media_type']),
    );
  });

  it('is answered from the headers, before the body arrives, and the connection closed', async () => {
    const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\ncontent-length: 1000\r\n\r\n`;
    // Only the head is ever sent: an answer can come only from the headers.
    const r = await rawExchange(gw.port, [head], { idleMs: 5000 });
    expect(r.clientClosed).toBe(false); // the server closed it, nobody waited out the idle bound
    expect(r.status).toBe(415);
    expect(r.headers.connection).toBe('close');
    expectError(415, JSON.parse(r.body.toString()), r.status, 'unsupported_media_type');
  });
});

/** A raw request whose body is sent chunked under `transferEncoding`, as one chunk. */
function chunkedRequest(transferEncoding: string, body: Buffer): Buffer {
  const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: ${transferEncoding}\r\nconnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(`${head}${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
}

describe('a request body with a transfer coding before chunked', () => {
  it('is refused with 415 naming the coding, counted, never read as JSON nor sent upstream', async () => {
    // node's parser undoes the chunking only: the bytes handed over are still gzip.
    const cases: [string, Buffer][] = [
      ['gzip, chunked', gzipSync(BODY)],
      ['GZIP,chunked', gzipSync(BODY)],
      ['deflate, chunked', deflateSync(BODY)],
      // A coding the gateway does not know may leave bytes that happen to parse: not served either.
      ['x-custom, chunked', Buffer.from(BODY)],
    ];
    const hits = upstream.hits.length;
    const before = refused.length;
    for (const [te, body] of cases) {
      const r = await rawExchange(gw.port, [chunkedRequest(te, body)], { idleMs: 5000 });
      expect(r.clientClosed, te).toBe(false);
      expect(r.headers.connection).toBe('close');
      const e = expectError(415, JSON.parse(r.body.toString()), r.status, 'unsupported_media_type');
      expect(e.message).toBe(`Transfer-Encoding '${te.split(',')[0]!.trim().toLowerCase()}' is not supported: the gateway takes uncompressed JSON request bodies (chunked alone is fine)`);
    }
    expect(upstream.hits).toHaveLength(hits);
    expect(refused.slice(before).map((e) => [e.status, e.errorCode])).toEqual(cases.map(() => [415, 'unsupported_media_type']));
  });

  it('chunked alone, in any case, with identity before it, is served', async () => {
    for (const te of ['chunked', 'Chunked', 'identity, chunked']) {
      const r = await rawExchange(gw.port, [chunkedRequest(te, Buffer.from(BODY))]);
      expect(r.status, `${te}: ${r.head}`).toBe(200);
    }
  });
});
