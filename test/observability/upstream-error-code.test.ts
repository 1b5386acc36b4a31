/**
 * An upstream error body whose `code` is not a code (a megabyte of it, or text
 * echoing the request): the trace keeps the category and status, never that
 * text. Kept, every trace held its megabyte (the ring holds 10,000 by default).
 */
import { expect, it } from 'vitest';
import type { TraceRecord } from '../../src/observability/events.js';
import { closeAfterEach, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream], () => (gw = upstream = undefined));

it('an error code that is a megabyte, or the request echoed, stays out of the trace', async () => {
  const codes = ['C'.repeat(1_000_000), 'you asked: my secret prompt', 'server_error'];
  upstream = await startRawUpstream((res, _hit, n) => {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error', code: codes[n - 1] } }));
  });
  gw = await startChatOver(upstream.url, { resilience: { maxRetries: 0 } });
  const messages: (string | null | undefined)[] = [];
  for (let i = 0; i < codes.length; i++) {
    const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'x-request-id': `code-${i}` }, body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'my secret prompt' }] }) });
    expect(res.status).toBe(503);
    await res.text();
    const trace = await fetch(`${gw.url}/traces/code-${i}`);
    const text = await trace.text();
    expect(text.length).toBeLessThan(4000);
    messages.push((JSON.parse(text) as TraceRecord).attempts[0]!.message);
  }
  expect(messages).toEqual(['500 server', '500 server', '500 server (server_error)']);
});
