/**
 * A stream's rate-limit headers arrive with its head, and its end may be minutes
 * later: they are learnt at the head, so a burst of streams is paced from the first
 * answer. Learnt only when a stream ended, every stream of a burst went to an upstream
 * that had already said it had nothing left, and met its 429.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { openaiProvider, startGateway, type TestGateway } from '../helpers/gateway.js';
import { chunk, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { VirtualClock } from '../helpers/virtual-clock.js';

let gw: TestGateway | undefined;
const upstreams: RawUpstream[] = [];
const held: ServerResponse[] = [];
afterEach(async () => {
  for (const res of held.splice(0)) res.end('data: [DONE]\n\n');
  await gw?.close(0);
  for (const u of upstreams.splice(0)) await u.close();
  gw = undefined;
});

/** Streams one token and holds the rest; its head says how many requests are left this minute. */
async function streaming(model: string, remaining: string): Promise<RawUpstream> {
  const u = await startRawUpstream((res) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'x-ratelimit-limit-requests': '1',
      'x-ratelimit-remaining-requests': remaining,
      'x-ratelimit-reset-requests': '60s',
    });
    res.write(chunk(model, { role: 'assistant', content: 'first' }));
    held.push(res);
  });
  upstreams.push(u);
  return u;
}

const stream = () =>
  fetch(`${gw!.baseURL}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });

it('paces the next stream by the headers of one still running', async () => {
  const limited = await streaming('free-model', '0');
  const spare = await streaming('spare-model', '100');
  gw = await startGateway(
    {
      providers: [openaiProvider('free', limited.url), openaiProvider('spare', spare.url)],
      models: [
        { name: 'chat', deployments: [{ provider: 'free', model: 'free-model' }], fallbacks: ['backup'] },
        { name: 'backup', deployments: [{ provider: 'spare', model: 'spare-model' }] },
      ],
    },
    { clock: new VirtualClock() },
  );
  const first = await stream();
  expect(first.headers.get('x-switchyard-deployment')).toBe('free/free-model');
  // The first stream is still running: its head said nothing is left for a minute.
  const second = await stream();
  expect(second.headers.get('x-switchyard-deployment')).toBe('spare/spare-model');
  expect(limited.hits).toHaveLength(1);
  await first.body?.cancel();
  await second.body?.cancel();
});
