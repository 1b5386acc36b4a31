/**
 * REVIEW: a buffered attempt arms its own timer for min(requestTimeoutMs,
 * time left to the deadline) (gateway.ts `buffered`). When the deadline is the
 * binding limit, that timer and the request's deadline timer race on the real
 * clock; when the attempt's fires first (about 1 run in 5 here) the attempt is
 * recorded as an upstream `timeout` (a breaker failure), and the executor
 * starts ANOTHER upstream call with ~0 ms left, aborted at once by the
 * deadline: a wasted upstream request, an inflated x-switchyard-attempts, and
 * a misleading trace. Statistical: 25 tries, each must make exactly 1 attempt.
 */
import { expect, it } from 'vitest';
import type { TraceRecord } from '../../src/observability/events.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { startGateway } from '../helpers/gateway.js';

it('a request whose deadline passes makes no further upstream call after it', async () => {
  const ups: RawUpstream[] = [];
  for (let i = 0; i < 3; i++) ups.push(await startRawUpstream(() => {})); // never answer
  const gw = await startGateway({
    resilience: { deadlineMs: 60, requestTimeoutMs: 10_000 },
    providers: ups.map((u, i) => ({ id: `p${i}`, type: 'openai', baseUrl: u.url })),
    models: [{ name: 'chat', strategy: 'cost', deployments: ups.map((_, i) => ({ provider: `p${i}`, model: `m${i}` })) }],
  });
  const seen: string[][] = [];
  try {
    for (let i = 0; i < 25; i++) {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(504);
      await res.arrayBuffer();
      const t = gw.observability.traces.query({ limit: 1 })[0] as TraceRecord;
      seen.push(t.attempts.map((a) => `${a.provider}:${a.message}`));
    }
  } finally {
    await gw.close(0);
    for (const u of ups) await u.close();
  }
  const extra = seen.filter((a) => a.length > 1);
  expect(extra).toEqual([]);
  // Upstreams 2 and 3 must never have been called: the deadline passed on the first.
  expect(ups[1]!.hits.length + ups[2]!.hits.length).toBe(0);
});
