/**
 * The load generator: N keep-alive connections on raw TCP, each sending one
 * pre-serialised request, reading the whole response (content-length or
 * chunked), and sending the next — a closed loop, no pipelining. Raw sockets
 * and a byte-level response parser keep its own cost to a few µs a request, so
 * on a shared core it does not become the limit it is meant to measure.
 *
 * A child process: the orchestrator sends `run` and gets `result` back (and,
 * for the hold case, `all-open` once every stream has its headers).
 */
import { connect, type Socket } from 'node:net';

export interface LoadSpec {
  port: number;
  /** The whole HTTP request, head and body. */
  request: string;
  connections: number;
  /** Closed loop for this long; 0: each connection sends exactly one request. */
  durationMs: number;
  /** Spread the connections' first requests over this long. */
  rampMs?: number;
  /** A stream must end with `data: [DONE]`. */
  stream: boolean;
  /** Give up on requests still running this long after the end. */
  graceMs?: number;
}

export interface LoadResult {
  completed: number;
  errors: number;
  /** First few distinct error descriptions. */
  errorKinds: string[];
  elapsedMs: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Most responses in progress at once (headers received, body not finished). */
  peakOpen: number;
}

const CR = 13;
const LF = 10;
const DONE_TAIL = Buffer.from('data: [DONE]');

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailer,
}

export function runLoad(spec: LoadSpec, onAllOpen?: () => void): Promise<LoadResult> {
  const req = Buffer.from(spec.request);
  const latencies: number[] = [];
  const errorKinds = new Set<string>();
  let errors = 0;
  let completed = 0;
  let open = 0;
  let peakOpen = 0;
  let stopping = false;
  let alive = 0;
  let headersSeen = 0;
  const t0 = performance.now();
  const stopAt = spec.durationMs > 0 ? t0 + spec.durationMs : Infinity;
  let resolveAll!: () => void;
  const allDone = new Promise<void>((r) => (resolveAll = r));

  const fail = (kind: string) => {
    errors++;
    if (errorKinds.size < 5) errorKinds.add(kind);
  };

  function client(): void {
    alive++;
    let socket: Socket;
    let state = State.Head;
    let head: Buffer | null = null;
    let remaining = 0;
    let sizeLine = '';
    let tail: Buffer = Buffer.alloc(0);
    let sentAt = 0;
    let status = 0;
    let inFlight = false;
    let finished = false;
    let closeAfter = false;

    const finish = () => {
      if (finished) return;
      finished = true;
      alive--;
      socket.destroy();
      if (alive === 0) resolveAll();
    };

    const send = () => {
      if (stopping || performance.now() >= stopAt) return finish();
      sentAt = performance.now();
      inFlight = true;
      state = State.Head;
      head = null;
      tail = Buffer.alloc(0);
      socket.write(req);
    };

    const complete = () => {
      inFlight = false;
      open--;
      const ms = performance.now() - sentAt;
      if (status !== 200) fail(`status ${status}`);
      else if (spec.stream && !tailHasDone(tail)) fail('stream ended without [DONE]');
      else if (performance.now() <= stopAt) {
        completed++;
        latencies.push(ms);
      }
      if (spec.durationMs === 0) return finish();
      if (closeAfter) {
        // The server will not reuse this connection: carry on over a new one.
        if (stopping || performance.now() >= stopAt) return finish();
        client();
        return finish();
      }
      send();
    };

    const onData = (data: Buffer) => {
      let i = 0;
      while (i < data.length) {
        switch (state) {
          case State.Head: {
            const buf: Buffer = head === null ? data.subarray(i) : Buffer.concat([head, data.subarray(i)]);
            const end = buf.indexOf('\r\n\r\n');
            if (end === -1) {
              head = buf;
              return;
            }
            const text = buf.toString('latin1', 0, end).toLowerCase();
            status = Number(text.slice(9, 12));
            closeAfter = text.includes('\r\nconnection: close');
            const consumed = end + 4 - (head === null ? 0 : head.length);
            head = null;
            i += consumed;
            open++;
            headersSeen++;
            if (open > peakOpen) peakOpen = open;
            if (spec.durationMs === 0 && headersSeen === spec.connections) onAllOpen?.();
            const cl = /\r\ncontent-length:\s*(\d+)/.exec(text);
            if (cl) {
              remaining = Number(cl[1]);
              state = State.Length;
              if (remaining === 0) complete();
            } else if (text.includes('transfer-encoding: chunked')) {
              state = State.ChunkSize;
              sizeLine = '';
            } else {
              fail('response without length');
              return finish();
            }
            break;
          }
          case State.Length: {
            const n = Math.min(remaining, data.length - i);
            i += n;
            remaining -= n;
            if (remaining === 0) complete();
            break;
          }
          case State.ChunkSize: {
            const c = data[i++]!;
            if (c === LF) {
              remaining = parseInt(sizeLine, 16);
              sizeLine = '';
              state = remaining === 0 ? State.Trailer : State.ChunkData;
            } else if (c !== CR) sizeLine += String.fromCharCode(c);
            break;
          }
          case State.ChunkData: {
            const n = Math.min(remaining, data.length - i);
            if (spec.stream) tail = keepTail(tail, data.subarray(i, i + n));
            i += n;
            remaining -= n;
            if (remaining === 0) state = State.ChunkDataEnd;
            break;
          }
          case State.ChunkDataEnd: {
            // The CRLF after a chunk's data.
            if (data[i++] === LF) state = State.ChunkSize;
            break;
          }
          case State.Trailer: {
            // No trailers are sent: the empty line ends the response.
            if (data[i++] === LF) complete();
            break;
          }
        }
      }
    };

    socket = connect({ port: spec.port, host: '127.0.0.1', noDelay: true }, send);
    socket.on('data', onData);
    socket.on('error', (err) => {
      if (!finished) fail(`socket ${(err as NodeJS.ErrnoException).code ?? err.message}`);
    });
    socket.on('close', () => {
      if (finished) return;
      if (inFlight) {
        fail('connection closed mid-response');
        if (state !== State.Head) open--;
      }
      finish();
    });
  }

  const ramp = spec.rampMs ?? 0;
  if (ramp > 0) {
    // Batches every 10 ms: a burst of thousands of SYNs would overflow the listen backlog.
    const batches = Math.max(1, Math.floor(ramp / 10));
    const per = Math.ceil(spec.connections / batches);
    let started = 0;
    const t = setInterval(() => {
      for (let k = 0; k < per && started < spec.connections; k++, started++) client();
      if (started >= spec.connections) clearInterval(t);
    }, 10);
  } else {
    for (let c = 0; c < spec.connections; c++) client();
  }

  const grace = spec.graceMs ?? 10_000;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    if (spec.durationMs > 0) {
      timer = setTimeout(() => {
        stopping = true;
        // Requests still running long after the end count as errors.
        timer = setTimeout(() => {
          fail('still running after the grace period');
          resolveAll();
        }, grace);
      }, spec.durationMs);
    }
    void allDone.then(() => {
      clearTimeout(timer);
      const elapsedMs = spec.durationMs > 0 ? spec.durationMs : performance.now() - t0;
      latencies.sort((a, b) => a - b);
      resolve({
        completed,
        errors,
        errorKinds: [...errorKinds],
        elapsedMs,
        rps: (completed * 1000) / elapsedMs,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        maxMs: latencies.length ? latencies[latencies.length - 1]! : NaN,
        peakOpen,
      });
    });
  });
}

/**
 * The `p` quantile (0.99: p99) of ascending `sorted` by nearest rank: the
 * smallest value with at least that share of them at or below it (p99 of 100
 * is the 99th, not the largest); NaN for none.
 */
export function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]! : NaN;
}

/** The last 32 bytes of a stream's body so far: enough to hold `data: [DONE]` and the blank line after it. */
export function keepTail(tail: Buffer, piece: Buffer): Buffer {
  if (piece.length >= 32) return piece.subarray(piece.length - 32);
  const joined = Buffer.concat([tail, piece]);
  return joined.length > 32 ? joined.subarray(joined.length - 32) : joined;
}

export function tailHasDone(tail: Buffer): boolean {
  return tail.indexOf(DONE_TAIL) !== -1;
}

export type LoadMessage = { type: 'run'; spec: LoadSpec };

if (process.send) {
  process.on('message', (m: LoadMessage) => {
    if (m.type !== 'run') return;
    void runLoad(m.spec, () => process.send!({ type: 'all-open' })).then((result) => process.send!({ type: 'result', result }));
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ type: 'ready' });
}
