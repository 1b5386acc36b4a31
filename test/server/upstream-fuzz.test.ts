/**
 * What upstreams send, fuzzed: for each native provider type and openai, real
 * answers in the provider's wire format (buffered, streamed, text and a tool
 * call, embeddings) made hostile by a seeded generator (upstream-fuzz-cases.ts)
 * and served over loopback to a real gateway. Whatever arrives, the client must
 * get a valid OpenAI answer or the contract's error shape (a stream that broke
 * after its head went out: its events, then one error event); never a 500 of
 * the gateway's own, never an unclassified `stream_error`, no unhandled
 * rejection or uncaught exception; and a valid request succeeds afterwards.
 *
 * A failure names the provider, seed and case index: `upstreamCase(SEED, provider, i)`
 * rebuilds it. UPSTREAM_FUZZ_SEED and UPSTREAM_FUZZ_CASES explore further.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream } from '../helpers/raw-upstream.js';
import { baseCount, PROVIDERS, upstreamCase, type Kind, type Provider, type UpstreamCase } from './upstream-fuzz-cases.js';
import { isErrorShape } from './wire.js';

const SEED = Number(process.env.UPSTREAM_FUZZ_SEED ?? 0x0f22_2026);
const CASES = Number(process.env.UPSTREAM_FUZZ_CASES ?? 150);
const CONCURRENCY = 16;

const MODELS: Record<Provider, string> = {
  openai: 'gpt-fz',
  anthropic: 'claude-sonnet-4-20250514',
  gemini: 'gemini-2.5-flash',
  cohere: 'command-a-03-2025',
  ollama: 'qwen3',
};

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  process.off('uncaughtException', onUnhandled);
});

/** A loopback upstream that plays, for each request, the case whose marker its body carries. */
async function startPlayer(cases: Map<number, UpstreamCase>): Promise<{ origin: string; paths: Map<number, string[]>; close(): Promise<void> }> {
  const paths = new Map<number, string[]>();
  const upstream = await startRawUpstream((res, hit) => {
    const m = /fuzzcase-(\d+)/.exec(hit.text);
    const c = m ? cases.get(Number(m[1])) : undefined;
    if (!c) {
      res.writeHead(418, { 'content-type': 'text/plain' }).end('no case');
      return;
    }
    const list = paths.get(Number(m![1])) ?? [];
    list.push(hit.url);
    paths.set(Number(m![1]), list);
    return play(res, c);
  });
  return { origin: new URL(upstream.url).origin, paths, close: upstream.close };
}

async function play(res: import('node:http').ServerResponse, c: UpstreamCase): Promise<void> {
  try {
    res.writeHead(c.status, c.headers);
    res.flushHeaders();
    let at = 0;
    for (const cut of [...c.splits, c.body.length]) {
      if (cut > at) res.write(c.body.subarray(at, cut));
      at = Math.max(at, cut);
      await new Promise((r) => setImmediate(r));
      if (res.destroyed) return;
    }
    if (c.end === 'end') res.end();
    else if (c.end === 'destroy') res.destroy();
    // 'stall': left open until the gateway gives up on it (or the server closes).
  } catch {
    res.destroy();
  }
}

function requestBody(c: UpstreamCase, i: number, alias: string): Record<string, unknown> {
  if (c.kind === 'embed') return { model: alias, input: [`fuzzcase-${i} alpha`, 'beta'] };
  const body: Record<string, unknown> = { model: alias, messages: [{ role: 'user', content: `fuzzcase-${i} What is the weather in Paris?` }] };
  if (c.tools) {
    body.tools = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
    ];
  }
  if (c.kind === 'stream') {
    body.stream = true;
    if (i % 2 === 0) body.stream_options = { include_usage: true };
  }
  return body;
}

/** A value for a failure message: short, and never a throw (JSON.stringify overflows on a deep one). */
function show(v: unknown): string {
  try {
    return String(JSON.stringify(v)).slice(0, 200);
  } catch {
    return '(too deep to show)';
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkToolCalls(calls: unknown, streamed: boolean): string | undefined {
  if (calls === undefined) return undefined;
  if (!Array.isArray(calls)) return 'tool_calls is not an array';
  for (const t of calls) {
    if (!isObj(t) || !isObj(t.function)) return `a tool call without its function: ${show(t)}`;
    if (streamed) {
      if (typeof t.index !== 'number') return 'a tool call delta without an index';
      if (t.function.arguments !== undefined && typeof t.function.arguments !== 'string') return 'tool call arguments that are not a string';
    } else if (typeof t.id !== 'string' || typeof t.function.name !== 'string' || typeof t.function.arguments !== 'string') {
      return `a tool call missing id, name or string arguments: ${show(t)}`;
    }
  }
  return undefined;
}

function judgeError(status: number, type: string, text: string): string | undefined {
  if (status < 400 || status >= 600) return `status ${status}`;
  if (!type.includes('application/json')) return `status ${status} with content-type ${type}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `status ${status} with a body that is not JSON: ${text.slice(0, 200)}`;
  }
  if (!isErrorShape(body)) return `status ${status} without the error shape: ${text.slice(0, 200)}`;
  if (status === 500 || body.error.code === 'internal_error') return `the gateway's own failure: ${status} ${text.slice(0, 300)}`;
  return undefined;
}

function judgeBuffered(kind: Kind, text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `a 200 that is not JSON: ${text.slice(0, 200)}`;
  }
  if (!isObj(body)) return 'a 200 that is not an object';
  if (kind === 'embed') {
    if (body.object !== 'list' || !Array.isArray(body.data) || body.data.length !== 2) return `not an embeddings list of 2: ${text.slice(0, 200)}`;
    for (const d of body.data) {
      if (!isObj(d) || typeof d.index !== 'number' || !(Array.isArray(d.embedding) ? d.embedding.every((x) => typeof x === 'number') : typeof d.embedding === 'string')) {
        return `an embedding item that is not one: ${show(d)}`;
      }
    }
    return undefined;
  }
  if (body.object !== 'chat.completion' || !Array.isArray(body.choices) || body.choices.length === 0) return `not a chat completion: ${text.slice(0, 200)}`;
  for (const c of body.choices) {
    if (!isObj(c) || !isObj(c.message)) return `a choice without a message: ${show(c)}`;
    const content = c.message.content;
    if (content !== null && content !== undefined && typeof content !== 'string') return `message content that is not a string: ${show(content)}`;
    const bad = checkToolCalls(c.message.tool_calls, false);
    if (bad) return bad;
  }
  return undefined;
}

/**
 * An `openai` answer is forwarded byte for byte (only its framing scanned, json-shape.ts: one
 * balanced object whose `choices`/`data` array starts with an object, an embeddings list one
 * item an input, no byte outside its strings that JSON has no place for): what is inside the
 * strings is the upstream's. Such a 200 must be the upstream's bytes (a broken UTF-8 sequence
 * repaired to U+FFFD) in that framing, and JSON.parse may refuse it only for a raw control
 * character inside a string, which the scan does not read for.
 */
function judgeForwarded(c: UpstreamCase, text: string): string | undefined {
  if (text !== new TextDecoder().decode(c.body)) return `a forwarded answer that is not the upstream's bytes: ${text.slice(0, 200)}`;
  const t = text.trim();
  if (!t.startsWith('{') || !t.endsWith('}')) return `a forwarded answer that is not one object: ${text.slice(0, 200)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return /control character in string/.test(String(err)) ? undefined : `a forwarded answer that is not JSON (${String(err)}): ${text.slice(0, 200)}`;
  }
  const list = isObj(body) ? body[c.kind === 'embed' ? 'data' : 'choices'] : undefined;
  if (!Array.isArray(list) || !isObj(list[0])) return `a forwarded answer without its array of objects: ${text.slice(0, 200)}`;
  if (c.kind === 'embed' && list.length !== 2) return `a forwarded embeddings list of ${list.length} for 2 inputs`;
  return undefined;
}

/** `forwarded`: an `openai` stream, whose chunks are relayed as they came once their `choices` (and a delta's `tool_calls`) are arrays of objects. */
function judgeStream(text: string, forwarded: boolean): string | undefined {
  const blocks = text.split('\n\n');
  if (blocks.at(-1) !== '') return `a stream that does not end with a whole event: ${JSON.stringify(text.slice(-200))}`;
  const values: string[] = [];
  for (const block of blocks.slice(0, -1)) {
    for (const line of block.split('\n')) {
      if (!line.startsWith('data: ')) return `a line that is not data: ${JSON.stringify(line.slice(0, 200))}`;
      values.push(line.slice(6));
    }
  }
  if (values.length === 0) return 'an empty stream';
  for (const [n, v] of values.entries()) {
    const last = n === values.length - 1;
    if (v === '[DONE]') {
      if (!last) return '[DONE] before the end';
      continue;
    }
    let ev: unknown;
    try {
      ev = JSON.parse(v);
    } catch {
      return `an event that is not JSON: ${v.slice(0, 200)}`;
    }
    if (isObj(ev) && 'error' in ev) {
      if (!last) return `an error event before the end: ${v.slice(0, 200)}`;
      if (!isErrorShape(ev)) return `an error event without the error shape: ${v.slice(0, 200)}`;
      if (ev.error.code === 'internal_error' || ev.error.code === 'stream_error') return `the gateway's own failure mid-stream: ${v.slice(0, 300)}`;
      continue;
    }
    if (last) return `a stream that ended without [DONE] or an error event: ${v.slice(0, 200)}`;
    if (!isObj(ev) || (!forwarded && ev.object !== 'chat.completion.chunk') || !Array.isArray(ev.choices)) return `a chunk that is not one: ${v.slice(0, 200)}`;
    for (const c of ev.choices) {
      if (forwarded) {
        if (!isObj(c)) return `a chunk choice that is not an object: ${show(c)}`;
        const calls = isObj(c.delta) ? c.delta.tool_calls : undefined;
        if (calls !== undefined && calls !== null && !(Array.isArray(calls) && calls.every(isObj))) return `tool_calls that are not a list of objects: ${show(calls)}`;
        continue;
      }
      if (!isObj(c) || typeof c.index !== 'number' || !isObj(c.delta)) return `a chunk choice without index or delta: ${show(c)}`;
      const content = c.delta.content;
      if (content !== null && content !== undefined && typeof content !== 'string') return 'delta content that is not a string';
      const bad = checkToolCalls(c.delta.tool_calls, true);
      if (bad) return bad;
    }
  }
  return undefined;
}

async function runCase(gw: TestGateway, provider: Provider, c: UpstreamCase, i: number, alias: string): Promise<{ status: number; problem?: string }> {
  const path = c.kind === 'embed' ? '/embeddings' : '/chat/completions';
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${gw.baseURL}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(requestBody(c, i, alias)),
      signal: AbortSignal.timeout(20_000),
    });
    text = await res.text();
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { status: 0, problem: `the client's request failed: ${e.message} ${e.cause?.code ?? ''} ${e.cause?.message ?? ''}` };
  }
  const type = res.headers.get('content-type') ?? '';
  if (res.status !== 200) return { status: res.status, problem: judgeError(res.status, type, text) };
  if (c.kind === 'stream') {
    if (!type.startsWith('text/event-stream')) return { status: 200, problem: `a stream answered as ${type}` };
    return { status: 200, problem: judgeStream(text, provider === 'openai') };
  }
  if (!type.includes('application/json')) return { status: 200, problem: `a 200 answered as ${type}` };
  const strict = judgeBuffered(c.kind, text);
  return { status: 200, problem: strict && provider === 'openai' ? judgeForwarded(c, text) : strict };
}

describe.each(PROVIDERS)('upstream fuzz: %s', (provider) => {
  it(`${CASES} hostile ${provider} answers reach the client as valid answers or contract errors`, async () => {
    const cases = new Map<number, UpstreamCase>();
    for (let i = 0; i < CASES; i++) cases.set(i, upstreamCase(SEED, provider, i));
    const player = await startPlayer(cases);
    const internal: string[] = [];
    const log = new Writable({
      write(line: Buffer, _enc, done) {
        if (line.toString().includes('"internal_error"')) internal.push(line.toString());
        done();
      },
    });
    const baseUrl = provider === 'openai' ? `${player.origin}/v1` : player.origin;
    // One alias (and so one deployment, with its own breaker and cooldown) a case: a case that
    // cools its deployment down (a 429, a 401) must not turn the cases after it into 503s.
    const gw = await startGateway(
      {
        resilience: { maxRetries: 0, requestTimeoutMs: 1000, ttftTimeoutMs: 500, idleTimeoutMs: 500, backoff: { baseMs: 1, maxMs: 1 } },
        providers: [{ id: 'up', type: provider, baseUrl, ...(provider === 'ollama' ? {} : { apiKey: '${FZ_KEY}' }) }],
        models: Array.from({ length: CASES }, (_, i) => ({ name: `c${i}`, deployments: [{ provider: 'up', model: `${MODELS[provider]}-${i}` }] })),
      },
      { env: { FZ_KEY: 'fz-key' }, observability: { logger: createLogger({ destination: log, level: 'error' }) } },
    );
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    try {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < CASES; i = next++) {
            const c = cases.get(i)!;
            const o = await runCase(gw, provider, c, i, `c${i}`);
            statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
            if (o.problem && failures.length < 30) failures.push(`seed ${SEED} ${provider} case ${i} (${c.label}): ${o.problem}`);
          }
        }),
      );
      expect(failures, failures.join('\n')).toEqual([]);
      expect(internal, internal[0]).toEqual([]);
      expect(unhandled, String(unhandled[0])).toEqual([]);
      // Both ways of answering were reached.
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
      expect([...statuses.keys()].some((s) => s >= 400), JSON.stringify([...statuses])).toBe(true);
      // And a valid answer of every kind goes through afterwards (the unmutated cases 0…n−1, once more:
      // on an idle gateway, so that no timer of the storm's can turn them into timeouts).
      for (let b = 0; b < baseCount(provider); b++) {
        const o = await runCase(gw, provider, cases.get(b)!, b, `c${b}`);
        expect(o, cases.get(b)!.label).toEqual({ status: 200 });
      }
    } finally {
      await gw.close(0);
      await player.close();
    }
  }, 60_000 + CASES * 100);
});
