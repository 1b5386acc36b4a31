/**
 * An upstream whose error message echoes the request's headers (some proxies and
 * OpenAI-compatible servers do): its words reach the client where they pass through (a
 * refused request, a pinned model's 404) or name why a stream broke. The provider's key,
 * which the gateway sent and the client never had, is cut out of them; the rest of the
 * message stays. Before, the client read the key in the error's message.
 */
import { expect, it } from 'vitest';
import { closeAfterEach, startChatOver, type TestGateway } from '../helpers/gateway.js';
import { chunk, sseHead, startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';

const KEY = 'sk-provider-key-0123456789';
const TOKEN = 'tok-extra-header-abcdefgh';

let gw: TestGateway | undefined;
let upstream: RawUpstream | undefined;
closeAfterEach(() => [gw, upstream], () => (gw = upstream = undefined));

const ask = (model: string, stream = false) =>
  fetch(`${gw!.baseURL}/chat/completions`, { method: 'POST', body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }) });

it("an upstream's error echoing the provider's credentials reaches the client without them", async () => {
  upstream = await startRawUpstream((res, hit) => {
    const echo = `bad request from ${String(hit.headers.authorization)} (proxy ${String(hit.headers['proxy-authorization'])})`;
    const model = hit.body.model as string;
    if (hit.body.stream === true) {
      // A stream that breaks after its first words with an error event echoing the headers.
      sseHead(res);
      res.write(chunk(model, { role: 'assistant', content: 'Hello' }));
      res.end(`data: ${JSON.stringify({ error: { message: echo, type: 'server_error' } })}\n\n`);
      return;
    }
    res.writeHead(model === 'gone' ? 404 : 400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: echo, type: 'invalid_request_error', code: null } }));
  });
  gw = await startChatOver(
    upstream.url,
    {
      resilience: { maxRetries: 0 },
      providers: [{ id: 'up', type: 'openai', baseUrl: upstream.url, apiKey: '${UP_KEY}', headers: { 'Proxy-Authorization': 'Bearer ${PROXY_TOKEN}' } }],
    },
    {},
    { env: { UP_KEY: KEY, PROXY_TOKEN: TOKEN } },
  );

  const refused = await ask('chat');
  expect(refused.status).toBe(400);
  const pinned = await ask('up/gone');
  expect(pinned.status).toBe(404);
  const broken = await ask('chat', true);
  expect(broken.status).toBe(200);

  const bodies = [await refused.text(), await pinned.text(), await broken.text()];
  // The credentials did travel (the upstream echoed what it got)…
  expect(upstream.hits[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  for (const body of bodies) {
    // …and the upstream's words reach the client, without them.
    expect(body).toContain('bad request from Bearer [redacted] (proxy [redacted])');
    expect(body).not.toContain(KEY);
    expect(body).not.toContain(TOKEN);
  }
  expect(bodies[2]).toContain('stream_broken');
});
