/**
 * A loopback HTTP upstream whose every byte and pause a test scripts: for the
 * misbehaviours a well-mannered fake never shows (stalls, cuts, malformed SSE
 * events, a missing `[DONE]`, a first token that comes too late).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WAIT_BOUND_MS } from './wait.js';

export interface RawHit {
  body: Record<string, unknown>;
  /** The request body exactly as it arrived. */
  text: string;
  headers: IncomingMessage['headers'];
  /** The request's path and query. */
  url: string;
}

export type RawHandler = (res: ServerResponse, hit: RawHit, n: number) => void | Promise<void>;

export interface RawUpstream {
  /** OpenAI-style base URL (`…/v1`). */
  url: string;
  hits: RawHit[];
  /**
   * Resolves once the n-th request has arrived (its body read, before the handler runs); fails
   * with a clear message if it has not within WAIT_BOUND_MS: what a test waits for instead of
   * sleeping until the gateway has probably sent it.
   */
  hit(n: number): Promise<RawHit>;
  /** Sockets still open (for leak checks). */
  openSockets(): number;
  close(): Promise<void>;
}

export async function startRawUpstream(handler: RawHandler): Promise<RawUpstream> {
  const hits: RawHit[] = [];
  const waiting = new Map<number, ((hit: RawHit) => void)[]>();
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      const text = Buffer.concat(parts).toString('utf8');
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // keep {}
      }
      const hit = { body, text, headers: req.headers, url: req.url ?? '' };
      hits.push(hit);
      for (const w of waiting.get(hits.length) ?? []) w(hit);
      waiting.delete(hits.length);
      Promise.resolve(handler(res, hit, hits.length)).catch(() => res.destroy());
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    hits,
    hit: (n) =>
      hits.length >= n
        ? Promise.resolve(hits[n - 1]!)
        : new Promise((resolve, reject) => {
            const t = setTimeout(() => reject(new Error(`timed out after ${WAIT_BOUND_MS} ms waiting for upstream request #${n} (${hits.length} came)`)), WAIT_BOUND_MS);
            const list = waiting.get(n) ?? [];
            list.push((h) => {
              clearTimeout(t);
              resolve(h);
            });
            waiting.set(n, list);
          }),
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start an OpenAI SSE response. */
export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

let n = 0;
/** One OpenAI chunk as an SSE event. */
export function chunk(model: string, delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, number>): string {
  const body: Record<string, unknown> = {
    id: `chatcmpl-raw-${++n}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  if (usage) body.usage = usage;
  return `data: ${JSON.stringify(body)}\n\n`;
}

export function usageChunk(model: string, prompt: number, completion: number): string {
  return `data: ${JSON.stringify({
    id: `chatcmpl-raw-${++n}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  })}\n\n`;
}

/** A whole buffered OpenAI chat completion's JSON text: one choice, finished, with usage. */
export function completionText(model: string, content: string, prompt: number, completion: number, id = 'chatcmpl-1'): string {
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  });
}

/** An upstream handler answering every request with one completion (completionText's arguments). */
export const answersCompletion =
  (model = 'm', content = 'hi', prompt = 1, completion = 1): RawHandler =>
  (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(completionText(model, content, prompt, completion));
  };

/**
 * Answers with `usage` as these bytes (JSON text: a repeated key stays repeated), buffered
 * or, when the request streams, as a content chunk, a finish and a usage chunk.
 */
export const answersWithUsage =
  (usage: string, content = 'from the cache'): RawHandler =>
  (res, hit) => {
    if (hit.body.stream === true) {
      sseHead(res);
      res.write(chunk('m', { role: 'assistant', content }));
      res.write(chunk('m', {}, 'stop'));
      res.end(`data: {"id":"u","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":${usage}}\n\ndata: [DONE]\n\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(content)}},"finish_reason":"stop"}],"usage":${usage}}`);
  };

/** Write the words of `text` as content chunks, one event each. */
export async function writeWords(res: ServerResponse, model: string, words: string[], gapMs = 0): Promise<void> {
  for (const w of words) {
    res.write(chunk(model, { content: w }));
    if (gapMs) await sleep(gapMs);
  }
}
