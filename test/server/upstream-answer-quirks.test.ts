/**
 * Buffered answers in a provider's native format with a `null` where an
 * object belongs, over real sockets (found by a socket-level fuzz): converted
 * without what is not an object, as the streams skip a malformed event —
 * never a 500 from the gateway's own code.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';
import { startRawUpstream } from '../helpers/raw-upstream.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** A gateway in front of one `type` provider whose every answer is `answer` (200, JSON); the client's reply. */
async function askThrough(type: 'anthropic' | 'cohere', answer: unknown): Promise<{ status: number; body: Record<string, any> }> {
  const upstream = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  });
  closers.push(() => upstream.close());
  const gw = await startGateway(
    {
      resilience: { maxRetries: 0 },
      providers: [{ id: 'up', type, baseUrl: new URL(upstream.url).origin, apiKey: '${UP_KEY}' }],
      models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'm' }] }],
    },
    { env: { UP_KEY: 'k' } },
  );
  closers.push(() => gw.close(0));
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe('native answers with a null inside', () => {
  it('anthropic: a null content block is skipped', async () => {
    const r = await askThrough('anthropic', {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'Hello' }, null, { type: 'text', text: ' there' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 3, output_tokens: 2 },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.content).toBe('Hello there');
  });

  it('cohere: a null content part and a null tool call are skipped', async () => {
    const r = await askThrough('cohere', {
      id: 'co_1',
      message: { role: 'assistant', content: [null, { type: 'text', text: 'Hi' }], tool_calls: [null] },
      finish_reason: 'COMPLETE',
      usage: { billed_units: { input_tokens: 3, output_tokens: 1 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.content).toBe('Hi');
    expect(r.body.choices[0].message.tool_calls).toBeUndefined();
  });
});
