/**
 * A client that reads a stream slowly, or stops reading: over real sockets the
 * SSE writer stops pulling when the client's socket is full, and the upstream
 * is then paused by the gateway, not stalled. The stall timer must wait as
 * long as the client does (a slow client is not a stalled upstream: no broken
 * stream, no resume, no breaker failure); a client that takes nothing for
 * sendTimeoutMs is gone, and its upstream released.
 */
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterEach, expect, it } from 'vitest';
import { EventBus, type TraceRecord } from '../../src/observability/events.js';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';
import { chatBody } from './wire.js';

const IDLE_MS = 1000;
/** Far more than loopback socket buffers hold: the gateway's writes must back up. */
const PIECES = 4000;
const PIECE = 'x'.repeat(2000);

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
let client: Socket | undefined;
afterEach(async () => {
  client?.destroy();
  await gw?.close(0);
  await upstream?.close();
  gw = upstream = client = undefined;
});

interface Flow {
  /** The upstream is waiting for the gateway to read (its write was refused, no drain since). */
  blocked: boolean;
  /** The upstream's response closed (ended, or the gateway let go of it). */
  closed: boolean;
  written: number;
}

/** An upstream that streams PIECES chunks as fast as the gateway takes them, then finishes. */
async function fastUpstream(flow: Flow): Promise<RawUpstream> {
  return startRawUpstream((res) => {
    sseHead(res);
    res.on('close', () => (flow.closed = true));
    const more = (): void => {
      flow.blocked = false;
      while (flow.written < PIECES) {
        flow.written++;
        if (!res.write(chunk('m', { content: PIECE }))) {
          flow.blocked = true;
          return void res.once('drain', more);
        }
      }
      res.end(chunk('m', {}, 'stop') + 'data: [DONE]\n\n');
    };
    more();
  });
}

/** A raw client socket that sends one streamed request and reads until its first event, then stops reading. */
async function pausedClient(port: number): Promise<{ s: Socket; received: () => string }> {
  const s = connect(port, '127.0.0.1');
  await once(s, 'connect');
  let received = '';
  let paused = false;
  s.on('data', (d: Buffer) => {
    received += d.toString('latin1');
    if (!paused && received.includes('data: ')) {
      paused = true;
      s.pause();
    }
  });
  const body = chatBody('chat', { stream: true });
  s.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  await expect.poll(() => received.includes('data: ')).toBe(true);
  return { s, received: () => received };
}

/** The body of a raw chunked HTTP response. */
function dechunked(raw: string): string {
  let i = raw.indexOf('\r\n\r\n') + 4;
  let body = '';
  for (;;) {
    const eol = raw.indexOf('\r\n', i);
    const size = parseInt(raw.slice(i, eol), 16);
    if (!(size > 0)) return body;
    body += raw.slice(eol + 2, eol + 2 + size);
    i = eol + 2 + size + 2;
  }
}

async function start(flow: Flow, sendTimeoutMs?: number): Promise<{ clock: VirtualClock; traced: TraceRecord[] }> {
  upstream = await fastUpstream(flow);
  const clock = new VirtualClock();
  const traced: TraceRecord[] = [];
  const bus = new EventBus();
  bus.on('request', (t) => traced.push(t));
  gw = await startChatOver(
    upstream.url,
    { resilience: { maxRetries: 0, idleTimeoutMs: IDLE_MS, streamResume: true } },
    { capabilities: ['prefill'] },
    { clock, bus, server: sendTimeoutMs === undefined ? undefined : { sendTimeoutMs } },
  );
  return { clock, traced };
}

it('a client that stops reading for longer than idleTimeoutMs still gets the whole stream, the upstream not blamed', async () => {
  const flow: Flow = { blocked: false, closed: false, written: 0 };
  const { clock, traced } = await start(flow);
  const served: Socket[] = [];
  gw!.server.server.on('connection', (c: Socket) => served.push(c));
  const { s, received } = await pausedClient(gw!.port);
  client = s;
  // Settled: the gateway's socket to the client is full and stays so (nothing more moves into
  // the kernel), and the upstream waits on the gateway, which stopped reading it — or, where
  // loopback buffers grow large enough (a loaded machine), has put all it had into them unread.
  let queued = -1;
  await expect
    .poll(
      () => {
        const c = served[0]!;
        const settled = c.writableNeedDrain && (flow.blocked || flow.written === PIECES) && c.writableLength === queued;
        queued = c.writableLength;
        return settled;
      },
      { timeout: 5000 },
    )
    .toBe(true);
  await clock.advance(IDLE_MS * 5);

  s.resume();
  await once(s, 'end');
  expect(upstream!.hits).toHaveLength(1); // not cut and resumed
  const text = dechunked(received());
  expect(text).toContain('data: [DONE]');
  expect(text).not.toContain('"error"');
  expect(text.split(PIECE).length - 1).toBe(PIECES);
  await expect.poll(() => traced.length).toBe(1);
  expect(traced[0]).toMatchObject({ status: 200, streamOutcome: 'completed', resumed: false });
  expect(traced[0]!.attempts).toEqual([expect.objectContaining({ errorType: null })]);
});

it('a client that takes nothing for sendTimeoutMs is gone: the stream ends as the client leaving, its upstream released', async () => {
  const flow: Flow = { blocked: false, closed: false, written: 0 };
  const { traced } = await start(flow, 100);
  const { s } = await pausedClient(gw!.port);
  client = s;
  // The virtual clock never moves: only the send timeout can end this.
  await expect.poll(() => flow.closed, { timeout: 5000 }).toBe(true);
  // Not `written < PIECES`: where loopback buffers grow large (a loaded machine) the upstream
  // puts all it has into them unread. The trace says the gateway ended the attempt for the client.
  await expect.poll(() => traced.length).toBe(1);
  expect(traced[0]).toMatchObject({ status: 200, streamOutcome: 'client_aborted', resumed: false });
  expect(traced[0]!.attempts).toEqual([expect.objectContaining({ errorType: 'aborted' })]);
  await expect.poll(() => gw!.server.inFlight).toBe(0);
});
