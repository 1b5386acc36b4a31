/**
 * The gateway's own CPU per request, without sockets: createGateway with the
 * bench config, traces and metrics on, and stub adapters that answer at once. Variants switch single features off, so the
 * cost of each shows as a difference. A profiling aid for the hot path, not
 * part of `npm run bench`.
 *
 *   npx tsx bench/gateway-overhead.ts [--requests 200000] [--stream]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { parseConfig } from '../src/config/parse.js';
import type { Config } from '../src/config/types.js';
import { createGateway } from '../src/core/gateway.js';
import { createObservability } from '../src/observability/create-observability.js';
import { createSilentLogger } from '../src/observability/logger.js';
import { EventBus } from '../src/observability/events.js';
import type { AdapterFactory, ChunkStream } from '../src/providers/types.js';
import type { ChatCompletion, ChatCompletionChunk } from '../src/protocol/openai.js';
import { chatBody } from './bodies.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '100000' }, stream: { type: 'boolean', default: false } } });
const N = Number(values.requests);

const COMPLETION: ChatCompletion = JSON.parse(
  '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":24,"completion_tokens":22,"total_tokens":46}}',
);
const RAW = new TextEncoder().encode(JSON.stringify(COMPLETION));
const CHUNKS = 20;

function chunk(i: number): ChatCompletionChunk {
  const base = { id: 'c', object: 'chat.completion.chunk' as const, created: 1, model: 'gpt-4o-mini' };
  if (i === 0) return { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] };
  if (i <= CHUNKS) return { ...base, choices: [{ index: 0, delta: { content: ' word' }, finish_reason: null }] };
  if (i === CHUNKS + 1) return { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
  return { ...base, choices: [], usage: { prompt_tokens: 24, completion_tokens: CHUNKS, total_tokens: 24 + CHUNKS } };
}

const stub: AdapterFactory = (provider) => ({
  provider,
  // As the OpenAI adapter answers: the bytes to forward and the usage read from them; no object is built.
  async chat() {
    return { response: COMPLETION, raw: RAW, headers: {}, usage: COMPLETION.usage };
  },
  async chatStream(): Promise<ChunkStream> {
    return {
      headers: {},
      malformed: 0,
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i <= CHUNKS + 2; i++) yield chunk(i);
      },
    };
  },
  async close() {},
});

type Doc = Record<string, unknown> & { providers: Record<string, unknown>[]; models: { deployments: Record<string, unknown>[] }[]; keys?: Record<string, unknown>[] };
const env = { MOCK_URL: 'http://127.0.0.1:9/v1', BENCH_UPSTREAM_KEY: 'sk-up', BENCH_KEY: 'sk-client' };
const baseDoc = () => parse(readFileSync(new URL('./switchyard.bench.yaml', import.meta.url), 'utf8')) as Doc;

const VARIANTS: Record<string, (d: Doc) => void> = {
  'all features (bench config)': () => {},
  'no tpm limits (no token counting)': (d) => {
    for (const p of d.providers) delete p.tpm;
    for (const m of d.models) for (const dep of m.deployments) delete dep.tpm;
    for (const k of d.keys ?? []) delete k.tpm;
  },
  'no client keys': (d) => {
    delete d.keys;
  },
  'no rpm/tpm limits at all': (d) => {
    for (const p of d.providers) (delete p.tpm, delete p.rpm);
    for (const m of d.models) for (const dep of m.deployments) (delete dep.tpm, delete dep.rpm);
    for (const k of d.keys ?? []) (delete k.tpm, delete k.rpm);
  },
};

async function measure(name: string, config: Config, observe: boolean): Promise<void> {
  const bus = new EventBus();
  const obs = observe ? createObservability(bus, config, { logger: createSilentLogger(), processMetrics: true }) : undefined;
  const gateway = createGateway(config, { bus, adapters: { openai: stub } });
  const key = config.keys[0] ?? null;
  const body = chatBody(values.stream ? 'stream20' : 'buffered', 'chat');
  const once = async () => {
    const res = await gateway.chat(JSON.parse(body), { key, headers: {} });
    if (res.stream) for await (const c of res) void c;
  };
  // Let the event loop turn now and then, as sockets would: timers fire, lazy loads finish.
  const turn = () => new Promise((r) => setImmediate(r));
  for (let i = 0; i < Math.min(20_000, N); i++) if ((await once(), i % 10 === 0)) await turn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) if ((await once(), i % 10 === 0)) await turn();
  const c = process.cpuUsage(c0);
  console.log(`${name.padEnd(48)} ${((c.user + c.system) / N).toFixed(2).padStart(7)} µs/request`);
  await gateway.close();
  await obs?.close();
}

console.log(`gateway.chat() CPU per request, ${values.stream ? '20-chunk streams' : 'buffered'}, ${N} requests each, stub upstream, no sockets`);
for (const [name, edit] of Object.entries(VARIANTS)) {
  const doc = baseDoc();
  edit(doc);
  await measure(name, parseConfig(doc, env), true);
}
const doc = baseDoc();
await measure('all features, no observability listeners', parseConfig(doc, env), false);
