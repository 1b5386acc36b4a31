/**
 * The benchmark's upstream: an OpenAI-format chat server on raw TCP with every
 * response byte pre-serialised, so it costs a few µs a request and the load
 * core measures the gateways, not itself. A child process: it reports its port
 * over IPC and takes its mode (buffered / stream of N chunks / slow stream)
 * from the orchestrator between runs.
 *
 * It speaks just enough HTTP/1.1 for a keep-alive client: content-length or
 * chunked request bodies, one request at a time per connection. A request whose
 * body carries `"stream":true` gets an SSE stream, written one event per socket
 * write (each its own TCP segment, as a real model's tokens are), else one JSON
 * completion.
 */
import { createServer, type Socket } from 'node:net';

export type MockMode =
  /** Each stream event in its own write, as fast as the loop turns. */
  | { kind: 'fast'; chunks: number }
  /** One event every `intervalMs` per stream (memory and lag under many open streams). */
  | { kind: 'slow'; chunks: number; intervalMs: number };

export type MockMessage = { type: 'mode'; mode: MockMode };

const COMPLETION = JSON.stringify({
  id: 'chatcmpl-bench0000000000000000000000',
  object: 'chat.completion',
  created: 1764460800,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Loopback says hello: a short, ordinary answer of a couple of dozen tokens, like most chat replies.', refusal: null },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 24, completion_tokens: 22, total_tokens: 46 },
  system_fingerprint: 'fp_bench',
});

const BUFFERED = Buffer.from(
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(COMPLETION)}\r\nx-request-id: req_bench\r\n\r\n${COMPLETION}`,
);
const STREAM_HEAD = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n');
const chunkBase = { id: 'chatcmpl-bench0000000000000000000000', object: 'chat.completion.chunk', created: 1764460800, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_bench' };

/** One SSE event as one HTTP chunk. */
export function frame(data: string): Buffer {
  const ev = `data: ${data}\n\n`;
  return Buffer.from(`${Buffer.byteLength(ev).toString(16)}\r\n${ev}\r\n`);
}

/** Every write of a stream of `n` content chunks: role, n × content, finish, usage, [DONE], end. */
export function streamFrames(n: number): Buffer[] {
  const frames: Buffer[] = [Buffer.concat([STREAM_HEAD, frame(JSON.stringify({ ...chunkBase, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] }))])];
  const token = frame(JSON.stringify({ ...chunkBase, choices: [{ index: 0, delta: { content: ' word' }, logprobs: null, finish_reason: null }] }));
  for (let i = 0; i < n; i++) frames.push(token);
  frames.push(frame(JSON.stringify({ ...chunkBase, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] })));
  frames.push(frame(JSON.stringify({ ...chunkBase, choices: [], usage: { prompt_tokens: 24, completion_tokens: n, total_tokens: 24 + n } })));
  frames.push(Buffer.concat([frame('[DONE]'), Buffer.from('0\r\n\r\n')]));
  return frames;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const STREAM_TRUE = Buffer.from('"stream":true');

interface Stream {
  socket: Socket;
  frames: Buffer[];
  next: number;
}

export function startMock(port = 0, host = '127.0.0.1') {
  let mode: MockMode = { kind: 'fast', chunks: 20 };
  let frames = streamFrames(20);
  /** Fast streams: each loop turn writes the next event of every one. */
  let active: Stream[] = [];
  let tickScheduled = false;

  const tick = () => {
    tickScheduled = false;
    const still: Stream[] = [];
    for (const s of active) {
      if (s.socket.destroyed) continue;
      s.socket.write(s.frames[s.next++]!);
      if (s.next < s.frames.length) still.push(s);
      else done(s.socket);
    }
    active = still;
    if (active.length > 0) schedule();
  };
  const schedule = () => {
    if (tickScheduled) return;
    tickScheduled = true;
    setImmediate(tick);
  };

  function startStream(socket: Socket): void {
    const s: Stream = { socket, frames, next: 0 };
    if (mode.kind === 'fast') {
      active.push(s);
      schedule();
      return;
    }
    socket.write(s.frames[s.next++]!);
    const t = setInterval(() => {
      if (socket.destroyed) return clearInterval(t);
      socket.write(s.frames[s.next++]!);
      if (s.next >= s.frames.length) {
        clearInterval(t);
        done(socket);
      }
    }, mode.intervalMs);
  }

  /** The response is out: the connection may send its next request. */
  const done = (socket: Socket): void => {
    (socket as Socket & { busy?: boolean }).busy = false;
  };

  const server = createServer({ noDelay: true }, (socket) => {
    const conn = socket as Socket & { busy?: boolean };
    let buf: Buffer | null = null;
    socket.on('error', () => {});
    socket.on('data', (data: Buffer) => {
      buf = buf === null ? data : Buffer.concat([buf, data]);
      for (;;) {
        const he = buf.indexOf(HEADER_END);
        if (he === -1) return;
        const head = buf.toString('latin1', 0, he).toLowerCase();
        const start = he + 4;
        let end: number;
        const cl = /content-length:\s*(\d+)/.exec(head);
        if (cl) {
          end = start + Number(cl[1]);
          if (buf.length < end) return;
        } else if (head.includes('transfer-encoding: chunked')) {
          // Bodies are small here: wait for the terminating chunk, then skip it whole.
          const term = buf.indexOf('\r\n0\r\n\r\n', start - 2);
          if (term === -1) return;
          end = term + 7;
        } else {
          end = start;
        }
        const at = buf.indexOf(STREAM_TRUE, start);
        const stream = at !== -1 && at < end;
        buf = end >= buf.length ? null : buf.subarray(end);
        if (conn.busy) {
          // A client that pipelines is not one of ours.
          socket.destroy();
          return;
        }
        if (head.startsWith('get')) {
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
        } else if (stream) {
          conn.busy = true;
          startStream(socket);
        } else {
          socket.write(BUFFERED);
        }
        if (buf === null) return;
      }
    });
  });

  return {
    server,
    listening: new Promise<number>((resolve) => server.listen(port, host, () => resolve((server.address() as { port: number }).port))),
    setMode(m: MockMode) {
      mode = m;
      frames = streamFrames(m.chunks);
    },
  };
}

// As a child process: listen, say where, obey mode changes.
if (process.send) {
  const mock = startMock();
  void mock.listening.then((port) => process.send!({ type: 'ready', port }));
  process.on('message', (m: MockMessage) => {
    if (m.type === 'mode') {
      mock.setMode(m.mode);
      process.send!({ type: 'mode-set' });
    }
  });
  process.on('disconnect', () => process.exit(0));
}
