/**
 * A slow reader is not a stalled upstream: while the client holds a chunk
 * (backpressure), the stall timer must not fire, or every slow client would
 * cost a resume and a mark against a healthy deployment.
 */
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/config/parse.js';
import { createGateway } from '../../src/core/gateway.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

it('pausing far longer than idleTimeoutMs between chunks completes without a resume', async () => {
  const clock = new VirtualClock(0);
  const config = parseConfig({
    resilience: { idleTimeoutMs: 300, ttftTimeoutMs: 1000 },
    providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0, tokensPerSecond: 1000 } }],
    models: [{ name: 'm', deployments: [{ provider: 'sim', model: 'x', capabilities: ['prefill'] }] }],
  }, {});
  const gw = createGateway(config, { clock });
  const traces: { resumed: boolean; streamOutcome: string | null; attempts: unknown[] }[] = [];
  gw.bus.on('request', (t) => traces.push(t));
  const res = await gw.chat({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  if (!res.stream) throw new Error('expected a stream');
  let text = '';
  for await (const chunk of res) {
    text += chunk.choices[0]?.delta.content ?? '';
    await clock.advance(2_000); // the client reads slowly
  }
  expect(text).toContain('Hello from sim/x');
  expect(traces[0]).toMatchObject({ resumed: false, streamOutcome: 'completed' });
  expect(traces[0]!.attempts).toHaveLength(1);
  await gw.close();
});

it('once the client lets go of a chunk, a silent upstream stalls idleTimeoutMs after that, not after the chunk arrived', async () => {
  const clock = new VirtualClock(0);
  const config = parseConfig({
    resilience: { idleTimeoutMs: 300, ttftTimeoutMs: 1000 },
    providers: [{ id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0, tokensPerSecond: 1000, faults: [{ kind: 'stall', probability: 1, afterChunks: 2 }] } }],
    models: [{ name: 'm', deployments: [{ provider: 'sim', model: 'x' }] }],
  }, {});
  const gw = createGateway(config, { clock });
  const res = await gw.chat({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  if (!res.stream) throw new Error('expected a stream');
  const it = res[Symbol.asyncIterator]();
  // The role chunk and the first content chunk came with the commit; the second is due at t=1 ms.
  await it.next();
  await it.next();
  const second = it.next();
  await clock.advance(1);
  expect((await second).done).toBe(false);
  await clock.advance(200); // the client holds the chunk for 200 ms (the upstream is silent from here on)
  let settled: 'pending' | 'resolved' | 'rejected' = 'pending';
  it.next().then(
    () => (settled = 'resolved'),
    () => (settled = 'rejected'),
  );
  await clock.advance(250); // t=451: 450 ms after the chunk arrived, 250 after it was let go
  expect(settled).toBe('pending');
  await clock.advance(100); // t=551: 350 ms after it was let go
  expect(settled).toBe('rejected');
  await gw.close();
});
