/**
 * End to end: requests through a real listening gateway carry marker strings
 * in prompts, completions (the upstreams reply with a marker) and keys (client
 * keys, provider keys, the admin key, a wrong key). Then `/traces`,
 * `/traces/:id`, `/metrics` and every captured log line (at trace level) are
 * scanned: no marker may appear anywhere. Sanity checks prove each marker
 * really travelled through the gateway (the completion reached the client, the
 * provider key reached the upstream), so an absence means something.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../providers/simulated/http-server.js';
import { startGateway, type TestGateway } from '../../test/helpers/gateway.js';
import { createLogger } from './logger.js';

const M = {
  prompt: 'PROMPT-MARKER-q8w2',
  system: 'SYSTEM-MARKER-z1x9',
  tool: 'TOOL-MARKER-k4j7',
  completion: 'COMPLETION-MARKER-v5n3',
  clientKey: 'CLIENT-KEY-MARKER-h6d0',
  wrongKey: 'WRONG-KEY-MARKER-p3s5',
  providerKey: 'PROVIDER-KEY-MARKER-c7b1',
  adminKey: 'ADMIN-KEY-MARKER-m2f8',
};

describe('observability never exposes prompts, completions or secrets', () => {
  let flaky: FaultServer;
  let good: FaultServer;
  let gw: TestGateway;
  const logLines: string[] = [];

  beforeAll(async () => {
    flaky = await startFaultServer({ simulate: { faults: [{ kind: 'status', status: 500, probability: 1 }] } });
    good = await startFaultServer({ simulate: { reply: `Here you go: ${M.completion}` } });
    const logStream = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logLines.push(chunk.toString());
        cb();
      },
    });
    gw = await startGateway(
      {
        server: { adminKey: '${ADMIN_KEY}' },
        resilience: { maxRetries: 1, backoff: { baseMs: 1, maxMs: 2 } },
        providers: [
          { id: 'flaky', type: 'openai', baseUrl: flaky.url, apiKey: '${FLAKY_KEY}' },
          { id: 'good', type: 'openai', baseUrl: good.url, apiKey: '${GOOD_KEY}' },
          { id: 'sim', type: 'simulated', simulate: { latencyMs: 0, ttftMs: 0, reply: `sim says ${M.completion}` } },
        ],
        models: [
          { name: 'chat', deployments: [{ provider: 'flaky', model: 'm-flaky' }], fallbacks: ['backup'] },
          { name: 'backup', deployments: [{ provider: 'good', model: 'm-good', capabilities: ['tools', 'embeddings'] }] },
          { name: 'local', deployments: [{ provider: 'sim', model: 'm-sim' }] },
        ],
        keys: [{ id: 'team-a', key: '${TEAM_KEY}' }],
      },
      {
        env: { ADMIN_KEY: M.adminKey, FLAKY_KEY: `${M.providerKey}-1`, GOOD_KEY: `${M.providerKey}-2`, TEAM_KEY: M.clientKey },
        observability: { logger: createLogger({ destination: logStream, level: 'trace' }) },
      },
    );
  });

  afterAll(async () => {
    await gw?.close();
    await flaky?.close();
    await good?.close();
  });

  const post = (path: string, body: unknown, key = M.clientKey, header: 'authorization' | 'x-api-key' = 'authorization') =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [header]: header === 'authorization' ? `Bearer ${key}` : key },
      body: JSON.stringify(body),
    });
  const admin = async (path: string) => {
    const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${M.adminKey}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  const messages = [
    { role: 'system', content: `Be brief. ${M.system}` },
    { role: 'user', content: `Please repeat ${M.prompt}` },
  ];

  it('finds no marker in /traces, /traces/:id, /metrics or the logs', async () => {
    // Buffered, failing over from a 500ing upstream to the good one.
    const buffered = await post('/v1/chat/completions', { model: 'chat', messages });
    expect(buffered.status).toBe(200);
    expect(await buffered.text()).toContain(M.completion);

    // Streamed, with tools, through x-api-key.
    const streamed = await post(
      '/v1/chat/completions',
      {
        model: 'chat',
        stream: true,
        stream_options: { include_usage: true },
        messages,
        tools: [{ type: 'function', function: { name: 'lookup', description: M.tool, parameters: { type: 'object', properties: {} } } }],
      },
      M.clientKey,
      'x-api-key',
    );
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain(M.completion);

    // In-process simulated provider, a pinned model, embeddings, an unknown alias, a wrong key.
    const local = await post('/v1/chat/completions', { model: 'local', messages });
    expect(await local.text()).toContain(M.completion);
    await (await post('/v1/chat/completions', { model: 'good/m-good', messages })).text();
    await (await post('/v1/embeddings', { model: 'backup', input: [M.prompt] })).text();
    const unknown = await post('/v1/chat/completions', { model: 'no-such-model', messages });
    expect(unknown.status).toBe(404);
    const wrong = await post('/v1/chat/completions', { model: 'chat', messages }, M.wrongKey);
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain(M.wrongKey);

    // The provider keys really went upstream (so their absence below means something).
    expect(JSON.stringify(good.requests.map((r) => r.headers))).toContain(`${M.providerKey}-2`);
    expect(JSON.stringify(flaky.requests.map((r) => r.headers))).toContain(`${M.providerKey}-1`);

    const list = await admin('/traces?limit=1000');
    const traces = (JSON.parse(list) as { data: { id: string; fallbackUsed: boolean; status: number }[] }).data;
    expect(traces.length).toBeGreaterThanOrEqual(5);
    expect(traces.some((t) => t.fallbackUsed)).toBe(true);
    const singles = await Promise.all(traces.map((t) => admin(`/traces/${encodeURIComponent(t.id)}`)));
    const metrics = await admin('/metrics');
    expect(metrics).toContain('switchyard_requests_total');

    await gw.close(); // drains queued log lines
    const logs = logLines.join('');
    expect(logs).toContain('"event":"request"');

    for (const [where, text] of [
      ['/traces', list],
      ['/traces/:id', singles.join('\n')],
      ['/metrics', metrics],
      ['logs', logs],
    ] as const) {
      for (const [name, marker] of Object.entries(M)) {
        expect(text.includes(marker), `${name} marker found in ${where}`).toBe(false);
      }
    }
  });
});
