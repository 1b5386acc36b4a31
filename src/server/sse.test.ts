/**
 * The SSE writer over a real loopback socket, with readers that misbehave: nothing a
 * reader does may escape the writer's pump (it runs from promise reactions and socket
 * events, where a throw would be an unhandled rejection or an uncaught exception and
 * take the process down); the client always gets the events read so far and an error event.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatCompletionChunk } from '../protocol/openai.js';
import { STREAM_END, type StreamReader } from '../core/stream-reader.js';
import { RAW_JSON } from '../providers/types.js';
import { writeSse } from './sse.js';

const META = { requestId: 'req-1', deployment: 'p/m', selection: 'weighted', attempts: 1, fallback: false, overheadMs: 0.1 };
const CHUNK = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] } as ChatCompletionChunk;

let servers: Server[] = [];
afterEach(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  servers = [];
});

/** Serves one stream from `reader`; resolves with what the client read and how the writer said it ended. */
async function serve(reader: StreamReader): Promise<{ body: string; end: string }> {
  let ended!: Promise<string>;
  const server = createServer((_req, res) => {
    ended = writeSse(res, { reader }, META);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const body = await new Promise<string>((resolve, reject) => {
    request({ port, host: '127.0.0.1', method: 'POST', path: '/' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(text));
    })
      .on('error', reject)
      .end();
  });
  return { body, end: await ended };
}

/** Hands out `CHUNK` once, then nothing until woken, then `fail`s. */
function scripted(fail: () => never, extra: Partial<StreamReader>): StreamReader {
  let step = 0;
  return {
    read() {
      step++;
      if (step === 1) return CHUNK;
      if (step === 2) return null;
      return fail();
    },
    wait: () => Promise.resolve(),
    notify(wake) {
      void Promise.resolve().then(wake);
    },
    close() {},
    ...extra,
  };
}

describe('writeSse with a misbehaving reader', () => {
  it('a reader whose close() throws after a failure: the events read, then an error event; the writer still settles', async () => {
    const reader = scripted(
      () => {
        throw new Error('upstream broke');
      },
      {
        close() {
          throw new Error('close threw');
        },
      },
    );
    const { body, end } = await serve(reader);
    expect(end).toBe('error');
    expect(body).toContain('"content":"hi"');
    expect(body).toMatch(/data: \{"error":\{[^\n]*"stream_error"/);
  });

  it('a reader without notify whose wait() rejects: an error event, not a hung stream', async () => {
    let n = 0;
    const reader: StreamReader = {
      read: () => (++n === 1 ? CHUNK : null),
      wait: () => Promise.reject(new Error('wait failed')),
      close() {},
    };
    const { body, end } = await serve(reader);
    expect(end).toBe('error');
    expect(body).toContain('"content":"hi"');
    expect(body).toContain('stream_error');
  });

  it('writes every event exactly, as UTF-8: multi-byte text, a long event, several to a batch, raw and re-serialised', async () => {
    const withText = (content: string, raw: boolean) => {
      const c = { ...CHUNK, choices: [{ index: 0, delta: { content }, finish_reason: null }] } as ChatCompletionChunk;
      return raw ? Object.assign(c, { [RAW_JSON]: JSON.stringify(c) }) : c;
    };
    const chunks = [withText('ü ß 日本 🙂', true), withText('x'.repeat(5000), true), withText('é"\\\n', false), withText('\ud800 lone', true), withText('', false)];
    const queue: (ChatCompletionChunk | null | typeof STREAM_END)[] = [chunks[0]!, chunks[1]!, null, chunks[2]!, chunks[3]!, chunks[4]!, STREAM_END];
    const reader: StreamReader = { read: () => (queue.length > 0 ? queue.shift()! : STREAM_END), wait: () => Promise.resolve(), close() {} };
    const { body, end } = await serve(reader);
    expect(end).toBe('done');
    const expected = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('');
    expect(body).toBe(`${expected}data: [DONE]\n\n`);
  });

  it('ends with [DONE] when the reader ends', async () => {
    let n = 0;
    const reader: StreamReader = { read: () => (++n === 1 ? CHUNK : STREAM_END), wait: () => Promise.resolve(), close() {} };
    const { body, end } = await serve(reader);
    expect(end).toBe('done');
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});
