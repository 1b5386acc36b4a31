/**
 * An OpenAI-compatible upstream gets the client's own request bytes with only
 * the model changed when the body starts with the model (as SDKs send it), and
 * an equivalent re-serialised body otherwise; a retry elsewhere gets its own
 * model, not the first deployment's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { completionText, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { startCostPair, type TestGateway } from '../helpers/gateway.js';

const ANSWER = completionText('m', 'ok', 3, 1);

let open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.reverse()) await o.close();
  open = [];
});

async function setup(statuses: number[] = [200]): Promise<{ up: RawUpstream; gw: TestGateway }> {
  const up = await startRawUpstream((res, _hit, n) => {
    const status = statuses[Math.min(n - 1, statuses.length - 1)]!;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 200 ? ANSWER : '{"error":{"message":"overloaded","type":"server_error"}}');
  });
  const gw = await startCostPair({ id: 'a', url: up.url, model: 'first-model' }, { id: 'b', url: up.url, model: 'second-model' });
  open.push(up, gw);
  return { up, gw };
}

const post = (gw: TestGateway, body: string) => fetch(`${gw.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('the forwarded request body', () => {
  it('model first: the same bytes, spacing, key order and unknown fields included, with the model replaced', async () => {
    const { up, gw } = await setup();
    const tail = ',  "messages" : [ {"role":"user","content":"say \\"model\\": hi"} ],"x_vendor_flag":{"deep":[1,2]} }';
    const res = await post(gw, `{"model":"chat"${tail}`);
    expect(res.status).toBe(200);
    expect(up.hits[0]!.text).toBe(`{"model":"first-model"${tail}`);
  });

  it('model elsewhere: an equivalent body with the model replaced', async () => {
    const { up, gw } = await setup();
    const res = await post(gw, '{ "messages": [{"role":"user","content":"hi"}], "model": "chat", "temperature": 0.5 }');
    expect(res.status).toBe(200);
    expect(up.hits[0]!.body).toEqual({ messages: [{ role: 'user', content: 'hi' }], model: 'first-model', temperature: 0.5 });
  });

  it('a body with a second "model" key: the upstream gets only the deployment\'s model, never the alias name', async () => {
    const { up, gw } = await setup();
    const res = await post(gw, '{"model":"chat","messages":[{"role":"user","content":"hi"}],"model":"chat"}');
    expect(res.status).toBe(200);
    expect(up.hits[0]!.text).not.toContain('"chat"');
    expect(up.hits[0]!.body).toEqual({ model: 'first-model', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('a body behind a UTF-8 byte order mark: the upstream gets valid JSON with the deployment\'s model', async () => {
    const { up, gw } = await setup();
    const json = '{"model":"chat","messages":[{"role":"user","content":"hi"}]}';
    const res = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]),
    });
    expect(res.status).toBe(200);
    expect(up.hits[0]!.body).toEqual({ model: 'first-model', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('a fail-over sends the next deployment its own model', async () => {
    const { up, gw } = await setup([503, 200]);
    const res = await post(gw, '{"model":"chat","messages":[{"role":"user","content":"hi"}]}');
    expect(res.status).toBe(200);
    expect(up.hits.map((h) => h.text)).toEqual([
      '{"model":"first-model","messages":[{"role":"user","content":"hi"}]}',
      '{"model":"second-model","messages":[{"role":"user","content":"hi"}]}',
    ]);
  });
});
