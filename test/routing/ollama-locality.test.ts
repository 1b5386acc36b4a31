/**
 * Which Ollama is local is the config's word, not the type's: an `ollama` provider is
 * local by default only at a loopback address as written. Over a real socket: the mock
 * listens on 127.0.0.1 and is addressed as 0.0.0.0, which reaches it but is not a loopback
 * address as written — it stands in for any other host (the gateway never resolves names).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

let ollama: RawUpstream;
const gateways: TestGateway[] = [];
beforeAll(async () => {
  ollama = await startRawUpstream((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ model: 'llama3', created_at: '2024-01-01T00:00:00Z', message: { role: 'assistant', content: 'hi' }, done: true, done_reason: 'stop', prompt_eval_count: 1, eval_count: 1 }));
  });
});
afterAll(async () => {
  for (const g of gateways) await g.close(0);
  await ollama.close();
});

async function askRestricted(baseUrl: string, locality?: 'local'): Promise<{ status: number; code?: string }> {
  const gw = await startGateway({
    providers: [{ id: 'ol', type: 'ollama', baseUrl, ...(locality ? { locality } : {}) }],
    models: [{ name: 'chat', deployments: [{ provider: 'ol', model: 'llama3' }] }],
  });
  gateways.push(gw);
  const r = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-switchyard-data-class': 'restricted' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'patient record' }] }),
  });
  const body = (await r.json()) as { error?: { code: string } };
  return { status: r.status, code: body.error?.code };
}

it('restricted data does not go to an ollama provider at another host unless the config says it is local', async () => {
  const port = new URL(ollama.url).port;
  expect(await askRestricted(`http://0.0.0.0:${port}`)).toEqual({ status: 403, code: 'policy_violation' });
  expect(ollama.hits.length).toBe(0);
  // Said in the config, it serves.
  expect(await askRestricted(`http://0.0.0.0:${port}`, 'local')).toEqual({ status: 200, code: undefined });
  expect(ollama.hits.length).toBe(1);
  // At a loopback address it is local by default, as before.
  expect(await askRestricted(`http://127.0.0.1:${port}`)).toEqual({ status: 200, code: undefined });
  expect(ollama.hits.length).toBe(2);
});
