/**
 * 1,000 streams through upstreams that fault at random (resets, 5xx, 429s,
 * hangs, cuts mid-stream) must leave nothing behind: no timers, no sockets, no
 * request still counted in flight. Resource counts come from Node itself
 * (`process.getActiveResourcesInfo`), compared with a baseline.
 */
import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { startFaultServer } from '../../src/providers/simulated/http-server.js';
import { seededRandom } from '../../src/core/clock.js';
import { startGateway } from '../helpers/gateway.js';
import { until } from '../helpers/wait.js';

const KINDS = ['Timeout', 'TCPSocketWrap', 'TCPServerWrap'] as const;

function resources(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

const FAULTS = [
  { kind: 'stream_abort', afterChunks: 2, probability: 0.15 },
  { kind: 'stall', afterChunks: 3, probability: 0.05 },
  { kind: 'reset', probability: 0.05 },
  { kind: 'status', status: 503, probability: 0.05 },
  { kind: 'rate_limit', retryAfterS: 0, probability: 0.05 },
  { kind: 'hang', probability: 0.03 },
] as const;

describe('stream hygiene under random faults', () => {
  it('1,000 streams leave no open handles behind', async () => {
    await new Promise((r) => setTimeout(r, 50));
    const baseline = resources();
    const a = await startFaultServer({ random: seededRandom(11), simulate: { faults: [...FAULTS], reply: 'one two three four five six seven eight nine ten' } });
    const b = await startFaultServer({ random: seededRandom(12), simulate: { faults: [...FAULTS], reply: 'one two three four five six seven eight nine ten' } });
    const gw = await startGateway({
      // Breakers stay closed, by count and by rate: on a loaded machine the 200 ms first-token
      // timeouts pile up, and the failure-rate rule opened both pools into 503s (this test is
      // about what streams leave behind, not about breakers).
      resilience: { ttftTimeoutMs: 200, idleTimeoutMs: 200, requestTimeoutMs: 500, deadlineMs: 3000, backoff: { baseMs: 1, maxMs: 5 }, cooldownMs: 20, breaker: { failureThreshold: 1000, minRequests: 1_000_000 } },
      providers: [
        { id: 'a', type: 'openai', baseUrl: a.url },
        { id: 'b', type: 'openai', baseUrl: b.url },
      ],
      models: [
        { name: 'm', deployments: [{ provider: 'a', model: 'ma', capabilities: ['prefill'] }, { provider: 'b', model: 'mb', capabilities: ['prefill'] }] },
      ],
    });
    const client = new Agent({ connections: 20 });
    const outcomes: Record<string, number> = {};
    let next = 0;
    const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'count' }] });
    const worker = async () => {
      while (next < 1000) {
        const i = next++;
        // Every 50th client walks away mid-stream.
        const ac = new AbortController();
        try {
          const res = await request(`${gw.url}/v1/chat/completions`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: client, signal: ac.signal });
          let text = '';
          for await (const buf of res.body) {
            text += buf.toString();
            if (i % 50 === 0) ac.abort();
          }
          const kind = res.statusCode !== 200 ? `status_${res.statusCode}` : text.includes('[DONE]') ? 'done' : text.includes('"error"') ? 'error_event' : 'other';
          outcomes[kind] = (outcomes[kind] ?? 0) + 1;
        } catch {
          outcomes.client_aborted = (outcomes.client_aborted ?? 0) + 1;
        }
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    expect(Object.values(outcomes).reduce((s, n) => s + n, 0)).toBe(1000);
    expect(outcomes.done).toBeGreaterThan(800);
    expect(outcomes.other ?? 0).toBe(0);
    // Streams the clients left settle just after: wait for that, bounded (a leak never settles).
    await until(() => gw.server.inFlight === 0, `no request in flight (${gw.server.inFlight} still are)`).catch(() => {});
    expect(gw.server.inFlight).toBe(0);

    await client.close();
    await gw.close(0);
    await a.close();
    await b.close();
    // Closed sockets and timers leave the list a few turns later: wait for that, bounded.
    const settled = () => {
      const now = resources();
      return KINDS.every((k) => (now[k] ?? 0) <= (baseline[k] ?? 0));
    };
    await until(settled, 'handles back to the baseline').catch(() => {});
    const after = resources();
    for (const kind of KINDS) {
      expect({ kind, n: Math.min(after[kind] ?? 0, baseline[kind] ?? 0) }).toEqual({ kind, n: after[kind] ?? 0 });
    }
  }, 60_000);
});
