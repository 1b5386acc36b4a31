/**
 * Requests refused before routing — a missing or wrong key, a body over the
 * bound, malformed JSON, invalid fields — over a real socket: each is counted
 * in switchyard_requests_total and logged (id, key, status, code; never the
 * body; a bad key only at debug), and none takes a place in the trace store.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sampleValue } from '../helpers/prom-parse.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  gw = undefined;
});

const SECRET_PROMPT = 'the-prompt-nobody-may-log';

async function start(lines: string[]): Promise<TestGateway> {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return startGateway(
    {
      server: { host: '127.0.0.1', port: 0, maxBodyBytes: 4096, adminKey: '${ADMIN_KEY}' },
      providers: [{ id: 'sim', type: 'simulated' }],
      models: [{ name: 'chat', deployments: [{ provider: 'sim', model: 'sim-1' }] }],
      keys: [{ id: 'team-a', key: '${TEAM_KEY}' }],
    },
    { env: { TEAM_KEY: 'sk-team', ADMIN_KEY: 'sk-admin' }, observability: { logger: createLogger({ destination: sink, level: 'info' }) } },
  );
}

const post = (path: string, body: string, headers: Record<string, string>) =>
  fetch(`${gw!.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
const TEAM = { authorization: 'Bearer sk-team' };
const ADMIN = { authorization: 'Bearer sk-admin' };

describe('requests refused before routing', () => {
  it('are counted and logged with their id, key and code, and never traced', async () => {
    const lines: string[] = [];
    gw = await start(lines);
    const chat = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: SECRET_PROMPT }] });
    const refusals: [string, string, Record<string, string>, number][] = [
      ['/v1/chat/completions', chat, { authorization: 'Bearer sk-wrong', 'x-request-id': 'bad-key-1' }, 401],
      ['/v1/chat/completions', chat, { 'x-request-id': 'no-key-1' }, 401],
      ['/v1/chat/completions', JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: SECRET_PROMPT.repeat(200) }] }), { ...TEAM, 'x-request-id': 'too-big-1' }, 413],
      ['/v1/chat/completions', `{"model":"chat","messages":[{"role":"user","content":"${SECRET_PROMPT}"`, { ...TEAM, 'x-request-id': 'bad-json-1' }, 400],
      ['/v1/chat/completions', JSON.stringify({ model: 'chat', messages: SECRET_PROMPT }), { ...TEAM, 'x-request-id': 'bad-field-1' }, 400],
      ['/v1/embeddings', JSON.stringify({ model: 'chat', input: 42 }), { ...TEAM, 'x-request-id': 'bad-field-2' }, 400],
    ];
    for (const [path, body, headers, status] of refusals) {
      const r = await post(path, body, headers);
      expect(r.status, headers['x-request-id']).toBe(status);
      expect(r.headers.get('x-request-id')).toBe(headers['x-request-id']);
      await r.arrayBuffer();
    }
    // And one that is routed: a trace, as ever.
    const ok = await post('/v1/chat/completions', chat, { ...TEAM, 'x-request-id': 'served-1' });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();

    const exp = parsePrometheusText(await (await fetch(`${gw.url}/metrics`, { headers: ADMIN })).text());
    const count = (labels: Record<string, string>) => sampleValue(exp, 'switchyard_requests_total', labels);
    // The key and size refusals never read a model: `other`; the invalid bodies named the alias.
    expect(count({ model: 'other', endpoint: 'chat', code: '401' })).toBe(2);
    expect(count({ model: 'other', endpoint: 'chat', code: '413' })).toBe(1);
    expect(count({ model: 'other', endpoint: 'chat', code: '400' })).toBe(1);
    expect(count({ model: 'chat', endpoint: 'chat', code: '400' })).toBe(1);
    expect(count({ model: 'chat', endpoint: 'embeddings', code: '400' })).toBe(1);
    expect(count({ model: 'chat', endpoint: 'chat', code: '200' })).toBe(1);

    const traces = (await (await fetch(`${gw.url}/traces`, { headers: ADMIN })).json()) as { data: { id: string }[] };
    expect(traces.data.map((t) => t.id)).toEqual(['served-1']);

    await new Promise((r) => setImmediate(r)); // log lines are written on the next turn
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request refused');
    // Bad keys only at debug (a client without a key must not decide how much is logged): not at info.
    expect(logged.map((l) => [l.id, l.keyId, l.endpoint, l.model, l.status, l.errorCode])).toEqual([
      ['too-big-1', 'team-a', 'chat', null, 413, 'payload_too_large'],
      ['bad-json-1', 'team-a', 'chat', null, 400, 'invalid_request'],
      ['bad-field-1', 'team-a', 'chat', 'chat', 400, 'invalid_request'],
      ['bad-field-2', 'team-a', 'embeddings', 'chat', 400, 'invalid_request'],
    ]);
    expect(lines.join('\n')).not.toContain(SECRET_PROMPT);
    expect(lines.join('\n')).not.toContain('sk-wrong');
  });
});
