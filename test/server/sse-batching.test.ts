/**
 * Stream events that arrive together leave together: when one upstream read
 * carries several SSE events, the gateway writes them to the client in one
 * socket write (one HTTP chunk), as a pass-through proxy would, instead of one
 * write per event. Read at the wire: the chunked framing of the response.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, usageChunk } from '../helpers/raw-upstream.js';
import { seenText } from '../helpers/wait.js';
import { rawExchange, sseData } from './wire.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** The payloads of a chunked HTTP body, one string per chunk. */
function httpChunks(body: Buffer): string[] {
  const out: string[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol === -1) throw new Error('truncated chunked body');
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (size === 0) return out;
    out.push(body.subarray(eol + 2, eol + 2 + size).toString('utf8'));
    at = eol + 2 + size + 2;
  }
}

const BATCH = 10;

/**
 * What the test's client has received: the upstream writes its next batch once the client has the
 * one before, so the gateway read each in its own read (was a 40 ms pause that usually meant it).
 */
let seen = seenText();

async function setup(): Promise<TestGateway> {
  const upstream = await startRawUpstream(async (res) => {
    sseHead(res);
    res.write(chunk('m', { role: 'assistant', content: '' }) + chunk('m', { content: 'first' }));
    await seen.reached('"first"');
    // Ten events in one write: the gateway reads them together.
    res.write(Array.from({ length: BATCH }, (_, i) => chunk('m', { content: ` w${i}` })).join(''));
    await seen.reached(`" w${BATCH - 1}"`);
    res.end(chunk('m', {}, 'stop') + usageChunk('m', 3, BATCH + 1) + 'data: [DONE]\n\n');
  });
  closers.push(() => upstream.close());
  const gw = await startChatOver(upstream.url);
  closers.push(() => gw.close(0));
  seen = seenText();
  return gw;
}

describe('SSE writes', () => {
  it('send events that arrived in one upstream read as one HTTP chunk, in order, and nothing is lost', async () => {
    const gw = await setup();
    const port = Number(new URL(gw.url).port);
    const body = JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const res = await rawExchange(port, [
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    ], { hangUpWhen: (received) => (seen.add(received.slice(seen.text.length)), false) });
    seen.check();
    expect(res.status).toBe(200);
    expect(res.headers['transfer-encoding']).toBe('chunked');

    const chunks = httpChunks(res.body);
    const batch = Array.from({ length: BATCH }, (_, i) => ` w${i}`);
    const contentOf = (data: string) => (data === '[DONE]' ? undefined : (JSON.parse(data) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content);
    // The ten batched events share one chunk (one write), not ten.
    const withBatch = chunks.filter((c) => sseData(c).some((d) => batch.includes(contentOf(d) ?? '')));
    expect(withBatch).toHaveLength(1);
    expect(sseData(withBatch[0]!).map(contentOf).filter((c) => c !== undefined && batch.includes(c))).toEqual(batch);

    // The whole stream, in order, ends with [DONE].
    const all = sseData(chunks.join(''));
    expect(all.at(-1)).toBe('[DONE]');
    expect(all.map(contentOf).filter((c) => c !== undefined && c !== '').join('')).toBe(`first${batch.join('')}`);
  });
});
