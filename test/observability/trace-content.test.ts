/**
 * What an operator reads at /traces after fail-over, retries and streams —
 * run against both trace stores (memory ring and SQLite), through the HTTP API.
 */
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultServer, type FaultServer } from '../../src/providers/simulated/http-server.js';
import type { TraceRecord } from '../../src/observability/events.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { traceOf as traced } from '../helpers/wait.js';

for (const store of ['memory', 'sqlite'] as const) {
  describe(`trace content (${store} store)`, () => {
    let primary: FaultServer;
    let secondary: FaultServer;
    let gw: TestGateway;
    let client: OpenAI;
    let dir: string;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'switchyard-traces-'));
      primary = await startFaultServer({ simulate: { latencyMs: 5 } });
      secondary = await startFaultServer({ simulate: { latencyMs: 5 } });
      gw = await startGateway({
        traces: { store, path: join(dir, 'traces.db') },
        resilience: { backoff: { baseMs: 1, maxMs: 2 }, maxRetries: 2 },
        providers: [
          { id: 'primary', type: 'openai', baseUrl: primary.url },
          { id: 'secondary', type: 'openai', baseUrl: secondary.url },
        ],
        models: [
          { name: 'chat', deployments: [{ provider: 'primary', model: 'p1', price: { input: 1, output: 2 } }], fallbacks: ['backup'] },
          { name: 'backup', deployments: [{ provider: 'secondary', model: 's1', price: { input: 3, output: 4 } }] },
        ],
      });
      client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'x', maxRetries: 0 });
    });

    afterAll(async () => {
      await gw.close(0);
      await primary.close();
      await secondary.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const traceOf = async (id: string): Promise<TraceRecord> => {
      const res = await fetch(`${gw.url}/traces/${id}`);
      expect(res.status).toBe(200);
      return (await res.json()) as TraceRecord;
    };

    it('a fallback after a 429', async () => {
      primary.script.enqueue({ kind: 'rate_limit', retryAfterS: 120 });
      const { response, data } = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'x' }] }).withResponse();
      const t = await traceOf(response.headers.get('x-request-id')!);
      expect(t).toMatchObject({
        model: 'chat',
        routedProvider: 'secondary',
        routedModel: 's1',
        deployment: 'secondary/s1',
        fallbackUsed: true,
        retryCount: 1,
        stream: false,
        status: 200,
        dataClass: 'internal',
        errorCode: null,
      });
      expect(t.selection).toMatch(/^fallback:backup/);
      expect(t.attempts).toEqual([
        expect.objectContaining({ provider: 'primary', model: 'p1', status: 429, errorType: 'rate_limited', ttftMs: null }),
        expect.objectContaining({ provider: 'secondary', model: 's1', status: 200, errorType: null }),
      ]);
      expect(t.usage).toEqual({ promptTokens: data.usage!.prompt_tokens, completionTokens: data.usage!.completion_tokens });
      expect(t.costUsd).toBeCloseTo((data.usage!.prompt_tokens * 3 + data.usage!.completion_tokens * 4) / 1e6, 12);
      expect(new Date(t.startedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(t.durationMs).toBeGreaterThan(0);
    });

    it('a retry on the same deployment, then the filters find it', async () => {
      // The 429 above cooled the primary down for 120 s: this one goes to the secondary, which fails once first.
      secondary.script.enqueue({ kind: 'status', status: 502 });
      const { response } = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'x' }] }).withResponse();
      const id = response.headers.get('x-request-id')!;
      const t = await traceOf(id);
      expect(t.attempts.map((a) => [a.provider, a.status, a.errorType])).toEqual([
        ['primary', 0, 'cooldown'],
        ['secondary', 502, 'server'],
        ['secondary', 200, null],
      ]);
      expect(t.retryCount).toBe(1);
      const list = (await (await fetch(`${gw.url}/traces?routedProvider=secondary&fallbackUsed=true&limit=5`)).json()) as { data: TraceRecord[] };
      expect(list.data[0]!.id).toBe(id);
      expect(list.data.every((r) => r.routedProvider === 'secondary' && r.fallbackUsed)).toBe(true);
      const bad = await fetch(`${gw.url}/traces?status=abc`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('status');
    });

    it('a stream: ttft, usage, outcome', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model: 'backup', stream: true, messages: [{ role: 'user', content: 'x' }] })
        .withResponse();
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
      expect(text.length).toBeGreaterThan(0);
      // A stream's trace is recorded when it is finished, which can be just after the client read its end.
      await traced(gw, response.headers.get('x-request-id'));
      const t = await traceOf(response.headers.get('x-request-id')!);
      expect(t).toMatchObject({ stream: true, status: 200, streamOutcome: 'completed', resumed: false, fallbackUsed: false, deployment: 'secondary/s1' });
      expect(t.ttftMs).toBeGreaterThan(0);
      // The request's TTFT runs from its start; the attempt's from the attempt's own.
      expect(t.ttftMs).toBeGreaterThanOrEqual(t.attempts[0]!.ttftMs!);
      expect(t.usage.completionTokens).toBeGreaterThan(0);
      // The client did not ask for usage, but the trace counts it (and the stream was not given a usage chunk).
    });

    it('a failed request is traced with its error code', async () => {
      const err = await client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect((err as { status: number }).status).toBe(404);
      const list = (await (await fetch(`${gw.url}/traces?status=404`)).json()) as { data: TraceRecord[] };
      // Refused before routing, but still traced: operators see who calls a model that does not exist.
      expect(list.data[0]).toMatchObject({ model: 'nope', status: 404, errorCode: 'model_not_found', deployment: null, attempts: [] });
    });
  });
}
