/**
 * Malformed upstream events of a stream attempt that fails before its first token
 * are counted in the trace although the attempt never reached the client:
 * only a committed attempt's were.
 */
import { afterEach, expect, it } from 'vitest';
import { EventBus, type TraceRecord } from '../../src/observability/events.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

let open: (RawUpstream | TestGateway)[] = [];
afterEach(async () => {
  for (const o of open.reverse()) await o.close(0);
  open = [];
});

it('an attempt with malformed events that is cut before its first token has them counted; the fallback serves', async () => {
  const broken = await startRawUpstream(async (res) => {
    sseHead(res);
    res.write(chunk('m1', { role: 'assistant', content: '' }));
    res.write('data: {not json\n\n');
    // Cut once the events are handed to the kernel (before the FIN, so the gateway reads them first),
    // not after a pause that usually meant it.
    await new Promise((flushed) => res.write('data: {"choices":[null]}\n\n', flushed));
    res.destroy();
  });
  const healthy = await startRawUpstream((res) => {
    sseHead(res);
    res.write(chunk('m2', { role: 'assistant', content: 'fine' }));
    res.end(chunk('m2', {}, 'stop') + 'data: [DONE]\n\n');
  });
  open.push(broken, healthy);
  const traced: TraceRecord[] = [];
  const bus = new EventBus();
  bus.on('request', (t) => traced.push(t));
  const gw = await startGateway(
    {
      resilience: { maxRetries: 0 },
      providers: [
        { id: 'a', type: 'openai', baseUrl: broken.url },
        { id: 'b', type: 'openai', baseUrl: healthy.url },
      ],
      models: [{ name: 'chat', deployments: [{ provider: 'a', model: 'm1' }], fallbacks: ['backup'] }, { name: 'backup', deployments: [{ provider: 'b', model: 'm2' }] }],
    },
    { bus },
  );
  open.push(gw);
  const res = await fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
  expect(await res.text()).toContain('fine');
  await expect.poll(() => traced.length).toBe(1);
  expect(traced[0]!.attempts.map((a) => [a.provider, a.errorType])).toEqual([
    ['a', 'network'],
    ['b', null],
  ]);
  expect(traced[0]!.malformedEvents).toBe(2);
});
