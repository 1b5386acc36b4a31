/**
 * A native stream that fails with an error event after its 200 head (Anthropic's
 * `rate_limit_error` here) was answered: the upstream counted the request. Its
 * capacity is spent, as for any answer, not given back as for a connection that
 * never opened — else the deployment, back from its cooldown, is sent more than
 * its rpm allows — and the 200's rate-limit headers teach the pacer as any
 * answer's do. Timelines on a virtual clock: p1 fails at 0 s and cools down for
 * 30 s; at 30 s its minute (its own rpm 1, or what the headers said) is still
 * used, so the spare serves; at 61 s p1 serves again.
 */
import { afterEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';
import { startAnthropicServer, type AnthropicServer } from '../servers/anthropic-server.js';

let anthropic: AnthropicServer;
let gw: TestGateway;
const clock = new VirtualClock();

/** The gateway, p1 with `rpm` of its own or none. */
async function start(rpm?: number): Promise<void> {
  anthropic = await startAnthropicServer();
  gw = await startGateway(
    {
      resilience: { maxRetries: 0, cooldownMs: 30_000, breaker: { failureThreshold: 100 } },
      providers: [
        { id: 'an', type: 'anthropic', baseUrl: anthropic.url, apiKey: '${K}' },
        { id: 'spare', type: 'anthropic', baseUrl: anthropic.url, apiKey: '${K}' },
      ],
      models: [
        { name: 'chat', deployments: [{ provider: 'an', model: 'claude-p1', ...(rpm ? { rpm } : {}) }], fallbacks: ['backup'] },
        { name: 'backup', deployments: [{ provider: 'spare', model: 'claude-spare' }] },
      ],
    },
    { env: { K: 'k' }, clock },
  );
}

afterEach(async () => {
  await gw.close(0);
  await anthropic.close();
});

async function served(): Promise<{ deployment: string | null; trace: [string, string | null][] }> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  const id = res.headers.get('x-request-id')!;
  await expect.poll(() => gw.observability.traces.get(id)).toBeDefined();
  return { deployment: res.headers.get('x-switchyard-deployment'), trace: gw.observability.traces.get(id)!.attempts.map((a) => [a.model, a.errorType]) };
}

/** At 30 s p1's cooldown is over but its minute is not: the spare serves, p1 passed over as throttled; at 61 s p1 serves. */
async function pacedOutForItsMinute(): Promise<void> {
  await clock.advance(30_000);
  const paced = await served();
  expect(paced.deployment).toBe('spare/claude-spare');
  expect(paced.trace[0]).toEqual(['claude-p1', 'throttled']);
  await clock.advance(31_000);
  expect((await served()).deployment).toBe('an/claude-p1');
}

it('spends the capacity of an attempt whose stream failed with an error event after its head', async () => {
  await start(1);
  anthropic.enqueue({ text: 'never sent', errorAfterEvents: { after: 1, type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } });
  const first = await served();
  expect(first.deployment).toBe('spare/claude-spare');
  expect(first.trace).toEqual([
    ['claude-p1', 'rate_limited'],
    ['claude-spare', null],
  ]);
  await pacedOutForItsMinute();
});

it("teaches the pacer from the failed stream's 200 headers, as from any answer", async () => {
  await start(); // no rpm of p1's own: only what the headers say paces it
  // A limit of 1 a minute, none left, the minute ending 60 s on: p1, back from its 30 s
  // cooldown, is still paced out.
  const reset = new Date(clock.now() + 60_000).toISOString();
  anthropic.enqueue({
    text: 'never sent',
    headers: { 'anthropic-ratelimit-requests-limit': '1', 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': reset },
    errorAfterEvents: { after: 1, type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' },
  });
  expect((await served()).deployment).toBe('spare/claude-spare');
  await pacedOutForItsMinute();
});
