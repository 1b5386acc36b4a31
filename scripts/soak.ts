/**
 * Soak: a long run of mixed buffered and streamed traffic through the gateway
 * against three loopback upstreams — two that fault at random (429 bursts,
 * 5xx, hangs, resets, streams cut mid-answer) and one healthy — printing every
 * client-visible error by kind (the bar is zero, apart from streams broken
 * after their first chunk, which are counted) and the heap before and after.
 * Faults: 429 bursts, 5xx, hangs, resets, streams cut or stalled mid-answer.
 *
 *   npm run soak                    # 10 minutes
 *   npm run soak -- --seconds 20    # the short version CI runs as a test
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { parseConfig } from '../src/config/parse.js';
import type { FaultRule } from '../src/config/types.js';
import { startSwitchyard } from '../src/core/start.js';
import { createSilentLogger } from '../src/observability/logger.js';
import { seededRandom } from '../src/core/clock.js';
import { startFaultServer } from '../src/providers/simulated/http-server.js';

export interface SoakReport {
  seconds: number;
  requests: number;
  ok: number;
  /** Client-visible errors by kind (status/code); must be empty. */
  errors: Record<string, number>;
  /** Streams that broke after their first chunk and could not be resumed. */
  brokenStreams: number;
  resumedStreams: number;
  fallbacks: number;
  /** Heap after a full GC: at start (gateway up, before traffic), every 10 s, at the end of traffic (gateway still up), after close. */
  heapBeforeMb: number;
  heapSamplesMb: number[];
  heapEndMb: number;
  heapAfterMb: number;
  /** Traces in the store at the end: the ring fills to its capacity first, so heap before that point is not growth. */
  tracesHeld: number;
}

/** Random faults plus a 429 burst in the middle of every minute. */
function faults(seconds: number, seedShift: number): FaultRule[] {
  const rules: FaultRule[] = [];
  for (let t = 0; t < seconds * 1000; t += 60_000) {
    rules.push({ kind: 'rate_limit', probability: 0.8, fromMs: t + 20_000 + seedShift, toMs: t + 30_000 + seedShift });
  }
  rules.push(
    { kind: 'rate_limit', probability: 0.05, retryAfterS: 1 },
    { kind: 'status', status: 500, probability: 0.05 },
    { kind: 'status', status: 503, probability: 0.03 },
    { kind: 'status', status: 529, probability: 0.02 },
    { kind: 'hang', probability: 0.01 },
    { kind: 'reset', probability: 0.03 },
    { kind: 'stream_abort', afterChunks: 3, probability: 0.08 },
    { kind: 'stall', afterChunks: 2, probability: 0.02 },
  );
  return rules;
}

const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
function heap(upstreams: readonly { requests: unknown[] }[] = []): number {
  // The loopback upstreams record every request they get (tests read them): in this process, not the gateway's.
  for (const u of upstreams) u.requests.length = 0;
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

export async function runSoak(seconds: number, concurrency = 16, log: (line: string) => void = () => {}, traceCapacity?: number): Promise<SoakReport> {
  const reply = { latencyMs: 5, ttftMs: 5, tokensPerSecond: 2000, reply: 'Soak test reply: steady words flowing through the gateway, one after another, until the end.' };
  const a = await startFaultServer({ random: seededRandom(1), simulate: { ...reply, faults: faults(seconds, 0) } });
  const b = await startFaultServer({ random: seededRandom(2), simulate: { ...reply, faults: faults(seconds, 15_000) } });
  const healthy = await startFaultServer({ random: seededRandom(3), simulate: reply });
  const upstreams = [a, b, healthy];
  const config = parseConfig(
    {
      server: { host: '127.0.0.1', port: 0 },
      ...(traceCapacity === undefined ? {} : { traces: { capacity: traceCapacity } }),
      resilience: { requestTimeoutMs: 1500, ttftTimeoutMs: 1000, idleTimeoutMs: 1000, deadlineMs: 20_000, cooldownMs: 5000, backoff: { baseMs: 20, maxMs: 200 } },
      providers: [
        { id: 'flaky-a', type: 'openai', baseUrl: a.url },
        { id: 'flaky-b', type: 'openai', baseUrl: b.url },
        { id: 'healthy', type: 'openai', baseUrl: healthy.url },
      ],
      models: [
        {
          name: 'soak',
          deployments: [
            { provider: 'flaky-a', model: 'a', capabilities: ['prefill'] },
            { provider: 'flaky-b', model: 'b', capabilities: ['prefill'] },
          ],
          fallbacks: ['steady'],
        },
        { name: 'steady', deployments: [{ provider: 'healthy', model: 'h', capabilities: ['prefill'] }] },
      ],
    },
    {},
  );
  const gw = await startSwitchyard(config, { port: 0, observability: { logger: createSilentLogger() } });
  const report: SoakReport = { seconds, requests: 0, ok: 0, errors: {}, brokenStreams: 0, resumedStreams: 0, fallbacks: 0, heapBeforeMb: 0, heapSamplesMb: [], heapEndMb: 0, heapAfterMb: 0, tracesHeld: 0 };
  gw.gateway.bus.on('request', (t) => {
    if (t.resumed) report.resumedStreams++;
    if (t.fallbackUsed) report.fallbacks++;
  });
  const client = new Agent({ connections: concurrency });
  const url = `${gw.url}/v1/chat/completions`;
  const bodies = [false, true].map((stream) => JSON.stringify({ model: 'soak', stream, messages: [{ role: 'user', content: 'soak' }] }));
  const bump = (k: string) => (report.errors[k] = (report.errors[k] ?? 0) + 1);

  report.heapBeforeMb = mb(heap());
  const end = Date.now() + seconds * 1000;
  let lastLog = Date.now();
  const worker = async (w: number) => {
    for (let i = 0; Date.now() < end; i++) {
      const stream = (i + w) % 2 === 1;
      report.requests++;
      try {
        const res = await request(url, { method: 'POST', body: bodies[stream ? 1 : 0], headers: { 'content-type': 'application/json' }, dispatcher: client });
        const text = await res.body.text();
        if (res.statusCode !== 200) {
          let code = '';
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '';
          } catch {
            // not JSON
          }
          bump(`${res.statusCode} ${code}`.trim());
        } else if (stream && !text.endsWith('data: [DONE]\n\n')) {
          if (text.includes('"error"')) report.brokenStreams++;
          else bump('stream ended without [DONE] or error');
        } else report.ok++;
      } catch (err) {
        bump(`client transport: ${(err as Error).message}`);
      }
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        report.heapSamplesMb.push(mb(heap(upstreams)));
        (globalThis as { __snap?: (l: string) => void }).__snap?.(String(report.heapSamplesMb.length));
        log(`${Math.round((end - Date.now()) / 1000)} s left: ${report.requests} requests, ${report.ok} ok, errors ${JSON.stringify(report.errors)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  await client.close();
  // Measured with the gateway still up: after close everything it held is gone, leaks included.
  report.heapEndMb = mb(heap(upstreams));
  report.tracesHeld = (gw.observability.traces as { size?: number }).size ?? -1;
  await gw.close(0);
  await Promise.all([a.close(), b.close(), healthy.close()]);
  report.heapAfterMb = mb(heap(upstreams));
  return report;
}

async function cli(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '600' }, concurrency: { type: 'string', default: '16' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log('npm run soak [-- --seconds N (600)] [--concurrency N (16)]');
    return;
  }
  const seconds = Number(values.seconds);
  console.log(`soak: ${seconds} s at concurrency ${values.concurrency}; two faulty upstreams and one healthy, behind one alias`);
  const r = await runSoak(seconds, Number(values.concurrency), (l) => console.log(l));
  const errors = Object.values(r.errors).reduce((s, n) => s + n, 0);
  console.log(`requests ${r.requests}, ok ${r.ok}, fallbacks ${r.fallbacks}, streams resumed ${r.resumedStreams}`);
  console.log(`client-visible errors: ${errors === 0 ? 'none' : JSON.stringify(r.errors)}`);
  console.log(`streams broken after their first chunk (error event sent): ${r.brokenStreams}`);
  console.log(`heap after GC: start ${r.heapBeforeMb} MB, every 10 s ${r.heapSamplesMb.join(' ')}, end of traffic ${r.heapEndMb} MB (${r.tracesHeld} traces held), after close ${r.heapAfterMb} MB`);
  process.exitCode = errors === 0 ? 0 : 1;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await cli();
