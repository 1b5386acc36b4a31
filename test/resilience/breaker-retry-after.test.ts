/**
 * A request whose own failures open its deployment's breaker: the 503's
 * Retry-After says when the breaker lets a probe through (recoveryMs), as the
 * next request's does, not the one-second hint of a plain 5xx.
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver } from '../helpers/gateway.js';
import { startRawUpstream } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

describe('Retry-After when the request opened the breaker', () => {
  it('names the breaker recovery, on the request that opened it and on the next', async () => {
    const upstream = await startRawUpstream((res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }));
    });
    closers.push(() => upstream.close());
    const gw = await startChatOver(upstream.url, { resilience: { maxRetries: 1, backoff: { baseMs: 1, maxMs: 2 }, breaker: { failureThreshold: 2, recoveryMs: 30_000 } } });
    closers.push(() => gw.close(0));
    const client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
    const retryAfter = async () => {
      try {
        await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
      } catch (err) {
        const e = err as InstanceType<typeof OpenAI.APIError>;
        expect(e.status).toBe(503);
        return Number(e.headers?.get('retry-after'));
      }
      throw new Error('expected a 503');
    };
    // Two failures: the retry's opens the breaker.
    const first = await retryAfter();
    expect(upstream.hits).toHaveLength(2);
    const second = await retryAfter();
    expect(upstream.hits).toHaveLength(2);
    expect([first, second]).toEqual([30, 30]);
    expect(first).toBeGreaterThanOrEqual(29);
  });
});
