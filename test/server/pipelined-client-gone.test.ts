/**
 * A client that pipelines requests and then closes the connection: node closes
 * the response it was writing but drops those queued behind it silently, so the
 * server closes them itself — each request is aborted and traced as the client
 * leaving, its upstream call released, and nothing stays in flight.
 */
import { connect } from 'node:net';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { EventBus, type TraceRecord } from '../../src/observability/events.js';
import { closeAfterEach, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { chatBody } from './wire.js';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream], () => (gw = upstream = undefined));

it('requests pipelined behind one in flight are aborted and traced when the client closes the connection', async () => {
  // An upstream that holds every answer: all three calls are in flight when the client leaves.
  const held: ServerResponse[] = [];
  const released: boolean[] = [];
  upstream = await startRawUpstream((res) => {
    const i = held.push(res) - 1;
    released[i] = false;
    res.on('close', () => (released[i] = true));
  });
  const traced: TraceRecord[] = [];
  const bus = new EventBus();
  bus.on('request', (t) => traced.push(t));
  gw = await startChatOver(upstream.url, { resilience: { maxRetries: 0 } }, {}, { bus });

  const s = connect(gw.port, '127.0.0.1');
  await once(s, 'connect');
  const post = (body: string) => `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  s.write(post(chatBody('chat')) + post(chatBody('chat', { stream: true })) + post(chatBody('chat')));
  await expect.poll(() => upstream!.hits.length).toBe(3);
  expect(gw.server.inFlight).toBe(3);

  s.destroy();
  await expect.poll(() => gw!.server.inFlight).toBe(0);
  await expect.poll(() => traced.length).toBe(3);
  for (const t of traced) expect(t).toMatchObject({ status: 499, errorCode: 'client_closed_request' });
  await expect.poll(() => released.every(Boolean)).toBe(true);
});
