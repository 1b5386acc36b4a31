/**
 * An error after routing carries the routing facts it has (found by the
 * contract audit: a 503 after several upstream attempts said nothing of
 * them): `x-switchyard-attempts` and `x-switchyard-overhead-ms`, over real
 * sockets, buffered and streamed. A refusal before any upstream call carries
 * attempts 0; a request refused before routing carries neither.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

async function setup(): Promise<TestGateway> {
  const upstream = await startRawUpstream((res, hit) => {
    const bad = JSON.stringify(hit.body).includes('make-it-invalid');
    res.writeHead(bad ? 400 : 500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: bad ? 'bad field' : 'boom', type: bad ? 'invalid_request_error' : 'server_error' } }));
  });
  closers.push(() => upstream.close());
  const gw = await startChatOver(upstream.url, { resilience: { maxRetries: 1, backoff: { baseMs: 1, maxMs: 1 }, breaker: { failureThreshold: 100 } } });
  closers.push(() => gw.close(0));
  return gw;
}

const ask = (gw: TestGateway, body: Record<string, unknown>) =>
  fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const messages = (content: string) => [{ role: 'user', content }];

describe('errors after routing', () => {
  it('say how many upstream attempts were made and how long the gateway itself took', async () => {
    const gw = await setup();
    for (const stream of [false, true]) {
      const r = await ask(gw, { model: 'chat', stream, messages: messages('hi') });
      expect(r.status).toBe(503);
      expect(r.headers.get('x-switchyard-attempts')).toBe('2'); // the attempt and its retry
      expect(r.headers.get('x-switchyard-overhead-ms')).toMatch(/^\d+\.\d{3}$/);
      expect(r.headers.get('x-switchyard-deployment')).toBeNull(); // none served
      await r.arrayBuffer();
    }
    const refused = await ask(gw, { model: 'chat', messages: messages('make-it-invalid') });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-switchyard-attempts')).toBe('1');
    await refused.arrayBuffer();
    // Refused before routing: no routing facts to give.
    const unread = await ask(gw, { model: 'chat', messages: 'not an array' });
    expect(unread.status).toBe(400);
    expect(unread.headers.get('x-switchyard-attempts')).toBeNull();
  });
});
