/**
 * Reasoning held before a native stream's first token counts against the hold bound
 * (MAX_HELD_CHARS), as an OpenAI-format stream's held chunks do: a model thinking on past it
 * fails the attempt as the upstream's fault rather than filling the gateway's memory. Over a
 * real socket, through the loopback Ollama server, whose thinking lines carry no upstream text
 * the gateway keeps.
 */
import { afterEach, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startOllamaServer, type OllamaServer } from '../servers/ollama-server.js';
import { MAX_HELD_CHARS } from '../../src/resilience/stream-attempt.js';

let upstream: OllamaServer | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close(0);
  await upstream?.close();
});

async function streamThinking(thinking: string): Promise<Response> {
  upstream = await startOllamaServer();
  upstream.enqueue({ kind: 'message', thinking, text: 'Done.' });
  gw = await startGateway({
    resilience: { maxRetries: 0, ttftTimeoutMs: 60_000, requestTimeoutMs: 60_000 },
    providers: [{ id: 'up', type: 'ollama', baseUrl: upstream.url }],
    models: [{ name: 'chat', deployments: [{ provider: 'up', model: 'qwen3' }] }],
  });
  return fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', stream: true, reasoning_effort: 'high', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

/** Thinking of `chars` characters, in words of 1 MiB (one NDJSON line each). */
const thinkingOf = (chars: number): string => {
  const word = 'x'.repeat((1 << 20) - 1) + ' ';
  return word.repeat(Math.ceil(chars / word.length));
};

it('thinking past the bound before the first token fails the attempt as the upstream\'s fault', async () => {
  const res = await streamThinking(thinkingOf(MAX_HELD_CHARS + (1 << 20)));
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status).toBe(503);
  expect(body.error.code).toBe('all_candidates_unavailable');
  expect(body.error.message).toContain('up/qwen3: server');
});

it('thinking within the bound is held and delivered whole before the answer', async () => {
  const res = await streamThinking(thinkingOf(4 << 20));
  expect(res.status).toBe(200);
  const text = await res.text();
  let reasoning = 0;
  let content = '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const delta = (JSON.parse(line.slice(6)) as { choices: { delta: { reasoning_content?: string; content?: string } }[] }).choices[0]?.delta;
    reasoning += delta?.reasoning_content?.length ?? 0;
    content += delta?.content ?? '';
  }
  expect(reasoning).toBe(4 << 20);
  expect(content).toBe('Done.');
});
