/**
 * A streamed attempt is counted in switchyard_upstream_attempts_total when it
 * ends, as it ended: one cut after its first token is a `network` failure, not
 * the `success` it looked like at its commit point (found by an audit: the
 * documented error-rate query missed every broken stream). Over real sockets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startChatOver, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';
import { chunk, sseHead, startRawUpstream, usageChunk, writeWords } from '../helpers/raw-upstream.js';
import { hungUp, nextEvent, seenText } from '../helpers/wait.js';

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.reverse()) await c();
  closers = [];
});

/** What the client of streamOnce has read: the upstream cuts once it has the two words, so after the commit. */
let client = seenText();

/** The first stream is cut after two words; a continuation (a prefill) is answered whole. */
async function setup(streamResume: boolean): Promise<TestGateway> {
  const upstream = await startRawUpstream(async (res, hit) => {
    const messages = hit.body.messages as { role: string }[];
    sseHead(res);
    res.write(chunk('m', { role: 'assistant', content: '' }));
    if (messages[messages.length - 1]!.role === 'assistant') {
      await writeWords(res, 'm', ['and the end.']);
      res.write(chunk('m', {}, 'stop'));
      res.end(`${usageChunk('m', 3, 3)}data: [DONE]\n\n`);
      return;
    }
    await writeWords(res, 'm', ['one ', 'two ']);
    await client.reached('"two "');
    res.destroy();
  });
  closers.push(() => upstream.close());
  const gw = await startChatOver(upstream.url, { resilience: { maxRetries: 0, streamResume } }, { capabilities: ['prefill'] });
  closers.push(() => gw.close(0));
  return gw;
}

async function streamOnce(gw: TestGateway): Promise<string> {
  client = seenText();
  const r = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'count' }] }),
  });
  return client.readAll(r);
}

async function attempts(gw: TestGateway, outcome: string): Promise<number | undefined> {
  const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`)).text());
  return sampleValue(exp, 'switchyard_upstream_attempts_total', { deployment: 'up/m', outcome });
}

describe('switchyard_upstream_attempts_total for streams', () => {
  it('counts a stream cut after its first token as the network failure it was', async () => {
    const gw = await setup(false);
    expect(await streamOnce(gw)).toContain('stream_broken');
    expect(await attempts(gw, 'network')).toBe(1);
    expect(await attempts(gw, 'success') ?? 0).toBe(0);
  });

  it('counts a stream the client left mid-answer as aborted, not success (found by review)', async () => {
    const upstream = await startRawUpstream(async (res) => {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content: '' }));
      res.write(chunk('m', { content: 'w0 ' }));
      await hungUp(res); // mid-answer until the gateway lets go
    });
    closers.push(() => upstream.close());
    const gw = await startChatOver(upstream.url);
    closers.push(() => gw.close(0));
    const ac = new AbortController();
    const r = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      signal: ac.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    const reader = r.body!.getReader();
    await reader.read(); // the first chunk is here: the attempt committed
    const finished = nextEvent(gw.gateway.bus, 'request', undefined, 'the request the client left to be finished');
    ac.abort();
    await finished;
    expect(await attempts(gw, 'aborted')).toBe(1);
    expect((await attempts(gw, 'success')) ?? 0).toBe(0);
  });

  it('counts a resumed stream as one failure and one success', async () => {
    const gw = await setup(true);
    const body = await streamOnce(gw);
    expect(body).toContain('and the end.');
    expect(body).not.toContain('stream_broken');
    expect(await attempts(gw, 'network')).toBe(1);
    expect(await attempts(gw, 'success')).toBe(1);
  });
});
