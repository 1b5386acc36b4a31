/**
 * A 2xx answer from an OpenAI-compatible upstream reaches the client as the
 * upstream's own bytes, with its usage read for the trace, and without the
 * gateway building the object — but an answer that is not a whole JSON object
 * with its `choices` (embeddings: `data`) array fails the attempt, so the request fails over.
 */
import { isUtf8 } from 'node:buffer';
import { afterEach, describe, expect, it } from 'vitest';
import { startRawUpstream } from '../helpers/raw-upstream.js';
import { startCostPair, startGateway, type TestGateway } from '../helpers/gateway.js';
import type { TraceRecord } from '../../src/observability/events.js';

const GOOD = '{ "id":"chatcmpl-2","object":"chat.completion","created":1,"model":"m",\n "choices":[{"index":0,"message":{"role":"assistant","content":"fine \\"ok\\" }"},"finish_reason":"stop"}],\n "usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7} }';

let open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.reverse()) await o.close();
  open = [];
});

/** Provider `bad` answers 200 with `badBody`; provider `good` with GOOD. */
async function setup(badBody: string | Buffer): Promise<{ gw: TestGateway; traces: TraceRecord[]; hits: () => number }> {
  const bad = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(badBody);
  });
  const good = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(GOOD);
  });
  const gw = await startCostPair({ id: 'bad', url: bad.url, model: 'm1' }, { id: 'good', url: good.url, model: 'm2' });
  open.push(bad, good, gw);
  const traces: TraceRecord[] = [];
  gw.gateway.bus.on('request', (t) => traces.push(t));
  return { gw, traces, hits: () => good.hits.length };
}

const ask = (gw: TestGateway) =>
  fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"chat","messages":[{"role":"user","content":"hi"}]}' });

describe('a forwarded 2xx answer', () => {
  it('goes to the client byte for byte, its usage in the trace', async () => {
    const { gw, traces } = await setup(GOOD);
    const res = await ask(gw);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(GOOD);
    expect(res.headers.get('x-switchyard-deployment')).toBe('bad/m1');
    expect(traces[0]!.usage).toEqual({ promptTokens: 5, completionTokens: 2 });
    expect(traces[0]!.costUsd).toBeCloseTo((5 * 1 + 2 * 1) / 1e6, 12);
  });

  it('with bytes that are not UTF-8 goes out as UTF-8, each broken character replaced as a decoder would', async () => {
    // "caf\xc3" + "\xa9\xa9": a character cut in two and a stray continuation byte.
    const broken = Buffer.concat([Buffer.from(GOOD.slice(0, GOOD.indexOf('fine'))), Buffer.from([0x63, 0x61, 0x66, 0xc3, 0x20, 0xa9]), Buffer.from(GOOD.slice(GOOD.indexOf('fine')))]);
    expect(isUtf8(broken)).toBe(false);
    const { gw, traces, hits } = await setup(broken);
    const res = await ask(gw);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(isUtf8(bytes)).toBe(true);
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    const body = JSON.parse(bytes.toString('utf8')) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]!.message.content).toBe('caf\ufffd \ufffdfine "ok" }');
    expect(hits()).toBe(0);
    expect(traces[0]!.usage).toEqual({ promptTokens: 5, completionTokens: 2 });
  });

  it('with a UTF-8 byte order mark is still a whole answer: forwarded as sent, not failed over', async () => {
    const withBom = `\ufeff${GOOD}`;
    const { gw, traces, hits } = await setup(withBom);
    const res = await ask(gw);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(withBom))).toBe(true);
    expect(res.headers.get('x-switchyard-deployment')).toBe('bad/m1');
    expect(hits()).toBe(0);
    expect(traces[0]!.usage).toEqual({ promptTokens: 5, completionTokens: 2 });
  });

  // An error object is failed as the error it says it is (a 500 saying "overloaded"); the rest as malformed (server).
  const malformed: [string, string, string?][] = [
    ['an HTML page', '<html><body>upstream proxy error</body></html>'],
    ['an error object', '{"error":{"message":"overloaded","type":"server_error"}}', 'overloaded'],
    ['a cut-off object', '{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"par'],
    ['an empty body', ''],
    ['a completion whose choices are empty', '{"id":"x","object":"chat.completion","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}}'],
    ['a completion whose choices hold a null', '{"id":"x","object":"chat.completion","created":1,"model":"m1","choices":[null]}'],
    // What Python's json.dumps writes for a -inf logprob: no JSON parser reads it.
    ['a completion with an -Infinity inside', '{"id":"x","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"logprobs":{"content":[{"token":"hi","logprob":-Infinity}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}'],
  ];
  for (const [what, body, category = 'server'] of malformed) {
    it(`fails the attempt and fails over when it is ${what}`, async () => {
      const { gw, traces, hits } = await setup(body);
      const res = await ask(gw);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(GOOD);
      expect(res.headers.get('x-switchyard-deployment')).toBe('good/m2');
      expect(hits()).toBe(1);
      expect(traces[0]!.attempts.map((a) => [a.provider, a.errorType])).toEqual([
        ['bad', category],
        ['good', null],
      ]);
    });
  }

  it('is parsed for a caller of the in-process API only when it reads the body', async () => {
    const { gw } = await setup(GOOD);
    const r = await gw.gateway.chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    if (r.stream) throw new Error('expected a buffered answer');
    expect(Buffer.from(r.raw!).toString()).toBe(GOOD);
    expect(r.body.choices[0]!.message.content).toBe('fine "ok" }');
    expect(r.body.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
  });
});

describe('a forwarded embeddings answer', () => {
  it('keeps its bytes, reads its usage for the trace, and is parsed only when an in-process caller reads the body', async () => {
    const EMB = '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-1]}],"model":"e","usage":{"prompt_tokens":3,"total_tokens":3}}';
    const up = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(EMB);
    });
    const gw = await startGateway({
      providers: [{ id: 'up', type: 'openai', baseUrl: up.url }],
      models: [{ name: 'emb', deployments: [{ provider: 'up', model: 'e' }] }],
    });
    open.push(up, gw);
    const traces: TraceRecord[] = [];
    gw.gateway.bus.on('request', (t) => traces.push(t));
    const r = await gw.gateway.embeddings({ model: 'emb', input: 'hi' });
    expect(Buffer.from(r.raw!).toString()).toBe(EMB);
    expect(traces[0]!.usage).toEqual({ promptTokens: 3, completionTokens: 0 });
    expect(r.body.data[0]!.embedding).toEqual([0.5, -1]);
  });

  it('fails the attempt and fails over when it carries no data array', async () => {
    const EMB = '{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]}],"model":"e","usage":{"prompt_tokens":1,"total_tokens":1}}';
    const bad = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"overloaded"}}');
    });
    const good = await startRawUpstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(EMB);
    });
    const gw = await startCostPair({ id: 'bad', url: bad.url, model: 'e1' }, { id: 'good', url: good.url, model: 'e2' });
    open.push(bad, good, gw);
    const res = await fetch(`${gw.baseURL}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"chat","input":"hi"}' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(EMB);
    expect(res.headers.get('x-switchyard-deployment')).toBe('good/e2');
    expect(bad.hits.length).toBe(1);
  });
});
