/**
 * REVIEW: request data reaches the upstream URL path. The Azure adapter builds
 * `/openai/deployments/${encodeURIComponent(model)}/chat/completions`, and a
 * pinned model is whatever the client wrote after `PROVIDER/`.
 * encodeURIComponent leaves `.` alone, so `model: "azure/.."` sends
 * `/openai/deployments/../chat/completions` (with the gateway's api-key) — a
 * different resource on the configured host once any proxy or server
 * normalises dot segments. Gemini's modelPath is not affected (its segment is
 * `..:generateContent`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

let gw: TestGateway | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await gw?.close(0);
  await close?.();
});

it.each(['..', '.', '../../x'])('pinned model %j never becomes a dot segment in the Azure path', async (model) => {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'DeploymentNotFound', message: 'not found' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  close = () => new Promise<void>((r) => server.close(() => r()));
  const port = (server.address() as AddressInfo).port;
  gw = await startGateway({
    providers: [{ id: 'az', type: 'azure', baseUrl: `http://127.0.0.1:${port}`, apiVersion: '2024-10-21' }],
    models: [{ name: 'chat', deployments: [{ provider: 'az', model: 'gpt-4o' }] }],
  });
  await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: `az/${model}`, messages: [{ role: 'user', content: 'x' }] }),
  }).then((r) => r.arrayBuffer());
  // Either refused at the gateway, or sent with the model as one opaque segment.
  for (const p of paths) {
    const segments = p.split('?')[0]!.split('/');
    expect(segments).not.toContain('..');
    expect(segments).not.toContain('.');
  }
});
