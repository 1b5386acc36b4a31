/**
 * The fuzz test's request generator: case `i` is a pure function of (seed, i),
 * so a failure names a case that can be replayed alone. Two kinds: well-formed
 * HTTP with hostile content (sent with undici), and hostile HTTP itself
 * (sent byte by byte over node:net).
 */
import { Readable } from 'node:stream';
import { seededRandom, type Random } from '../../src/core/clock.js';
import { HANG_UP, type RawOptions, type RawPart } from './wire.js';

export type Rng = Random;
/** The cases' draws: the same seed, the same cases (mulberry32). */
export const rngFor: (seed: number) => Rng = seededRandom;

export interface HttpCase {
  kind: 'http';
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer | (() => Readable);
  /** Abort the request after this many ms (a client leaving mid-request or mid-stream). */
  abortAfterMs?: number;
}

export interface RawCase {
  kind: 'raw';
  label: string;
  parts: RawPart[];
  opts?: RawOptions;
  /** Garbage: the server must close the connection itself (not leave it hanging). */
  serverMustClose: boolean;
}

export type FuzzCase = HttpCase | RawCase;

export interface FuzzEnv {
  maxBodyBytes: number;
  /** Client keys and the admin key the gateway accepts. */
  key: string;
  limitedKey: string;
  adminKey: string;
}

const int = (r: Rng, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, xs.length)]!;
const chance = (r: Rng, p: number) => r() < p;

const MODELS = ['fast', 'smart', 'auto', 'sim/sim-mini', 'sim/whatever-model', 'ghost/x', 'nope', '', ' fast', 'FAST', 'fast/', '/fast', 'sim/', '__proto__', 'constructor', 'toString'];
const ROLES = ['user', 'system', 'assistant', 'developer', 'tool', 'function', 'wizard', '', 'USER'];
const PATHS = [
  '/v1/chat/completions',
  '/chat/completions',
  '/v1/embeddings',
  '/embeddings',
  '/v1/models',
  '/models',
  '/healthz',
  '/readyz',
  '/metrics',
  '/traces',
  '/traces?limit=-5&since=yesterday',
  '/traces?fallbackUsed=maybe&status=abc&limit=1e9',
  '/traces?model=fast&limit=3',
  '/traces/%ZZ',
  '/traces/%E0%A4%A',
  '/traces/nope',
  '/traces/',
  '/v1/chat/completions/',
  '/v1/chat/completions?stream=true',
  '/v2/chat/completions',
  '/',
  '//',
  '/%00',
  '/..%2f..%2fetc%2fpasswd',
  '/v1/models/fast',
  '/' + 'a'.repeat(3000),
];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

/** A value of a random JSON type, sometimes hostile. */
function anyValue(r: Rng): unknown {
  switch (int(r, 16)) {
    case 0: return null;
    case 1: return chance(r, 0.5);
    case 2: return pick(r, [0, -1, 1, 1.5, -0, 1e308, -1e308, 2 ** 53 + 1, 3]);
    case 3: return '';
    case 4: return pick(r, ['x', 'user', 'fast', 'function', 'text', 'image_url', 'json_object']);
    case 5: return 'y'.repeat(int(r, 5000));
    case 6: return [];
    case 7: return [anyValue(r)];
    case 8: return {};
    case 9: return { type: anyValue(r), text: anyValue(r) };
    case 10: return nestedArray(int(r, 60));
    case 11: return '\u0000nul\u0000';
    case 12: return '\ud800 lone surrogate \udfff';
    case 13: return 'é中文🙂';
    case 14: return { __proto__: { polluted: true }, constructor: { prototype: 1 } };
    default: return { role: pick(r, ROLES), content: anyValue(r) };
  }
}

function nestedArray(depth: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

function validChat(r: Rng): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: pick(r, ['fast', 'smart', 'auto', 'sim/sim-mini']),
    messages: [{ role: 'user', content: 'hello there' }],
  };
  if (chance(r, 0.2)) body.stream = true;
  if (chance(r, 0.2)) body.temperature = 0.5;
  if (chance(r, 0.1)) body.max_tokens = 1 + int(r, 20);
  if (chance(r, 0.1)) body.tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
  if (chance(r, 0.1)) body.response_format = { type: 'json_object' };
  if (body.stream && chance(r, 0.5)) body.stream_options = { include_usage: true };
  return body;
}

const CHAT_PATHS: ReadonlyArray<readonly (string | number)[]> = [
  ['model'], ['messages'], ['messages', 0], ['messages', 0, 'role'], ['messages', 0, 'content'],
  ['messages', 0, 'content', 0], ['messages', 0, 'tool_calls'], ['messages', 0, 'tool_call_id'], ['messages', 1],
  ['stream'], ['stream_options'], ['stream_options', 'include_usage'], ['temperature'], ['top_p'], ['n'],
  ['max_tokens'], ['max_completion_tokens'], ['tools'], ['tools', 0], ['tools', 0, 'function'],
  ['tools', 0, 'function', 'name'], ['response_format'], ['response_format', 'type'], ['tool_choice'], ['user'], ['unknown_field'],
  ['tools', 0, 'type'], ['response_format', 'json_schema'], ['response_format', 'json_schema', 'name'], ['logprobs'], ['top_logprobs'],
  ['logit_bias'], ['logit_bias', '50256'], ['metadata'], ['metadata', 'k'], ['modalities'], ['audio'], ['prediction'], ['web_search_options'],
];

/** Sets `path` in `obj` to `value`, creating containers of the wrong kind where needed. */
function setPath(obj: Record<string, unknown>, path: readonly (string | number)[], value: unknown): void {
  let cur: Record<string | number, unknown> = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    const next = cur[k];
    if (typeof next !== 'object' || next === null) cur[k] = typeof path[i + 1] === 'number' ? [] : {};
    cur = cur[k] as Record<string | number, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

function mutatedChat(r: Rng): Record<string, unknown> {
  const body = validChat(r);
  const n = 1 + int(r, 3);
  for (let i = 0; i < n; i++) {
    if (chance(r, 0.15)) delete body[pick(r, Object.keys(body))];
    else if (chance(r, 0.15)) body.model = pick(r, MODELS);
    else setPath(body, pick(r, CHAT_PATHS), anyValue(r));
  }
  return body;
}

function mutatedEmbeddings(r: Rng): Record<string, unknown> {
  const body: Record<string, unknown> = { model: pick(r, ['fast', 'smart', 'sim/sim-mini', 'nope']), input: pick(r, ['hello', ['a', 'b'], [1, 2, 3], [[1, 2], [3]]]) };
  if (chance(r, 0.7)) {
    const field = pick(r, ['model', 'input', 'dimensions', 'encoding_format', 'user']);
    body[field] = chance(r, 0.5) ? anyValue(r) : pick(r, [[], [1, 'a'], [[1.5]], '', -1, 0, 100001, [null]]);
  }
  return body;
}

function randomBytes(r: Rng, n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = int(r, 256);
  return b;
}

/** Printable ASCII and latin-1: what a well-formed client can put in a header. */
function headerText(r: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(chance(r, 0.9) ? 0x20 + int(r, 95) : 0xa0 + int(r, 96));
  return s.trim() || 'x';
}

function randomHeaders(r: Rng, env: FuzzEnv): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  switch (int(r, 10)) {
    case 0: break; // no key
    case 1: h.authorization = `Bearer ${headerText(r, 20)}`; break;
    case 2: h['x-api-key'] = headerText(r, 40); break;
    case 3: h.authorization = pick(r, ['Bearer', 'Basic Zm9vOmJhcg==', 'bearer  ', `Bearer ${env.key} extra`, `Token ${env.key}`]); break;
    case 4: h['x-api-key'] = env.limitedKey; break;
    case 5: h.authorization = `Bearer ${env.adminKey}`; break;
    default: h.authorization = `Bearer ${env.key}`;
  }
  if (chance(r, 0.25)) h['x-request-id'] = pick(r, ['ok-id-1', 'has spaces', 'x'.repeat(200), headerText(r, 30), '', 'a/b:c@d=e+f', 'é']);
  if (chance(r, 0.2)) h['x-switchyard-data-class'] = pick(r, ['public', 'internal', 'confidential', 'restricted', 'PUBLIC', ' Confidential ', 'secret', '', '__proto__', 'constructor', headerText(r, 10)]);
  if (chance(r, 0.1)) h['content-type'] = pick(r, ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', '']);
  if (chance(r, 0.05)) h.accept = pick(r, ['text/event-stream', '*/*', 'application/xml']);
  return h;
}

function httpCase(r: Rng, env: FuzzEnv): HttpCase {
  const headers = randomHeaders(r, env);
  const post = (label: string, path: string, body: HttpCase['body'], extra: Partial<HttpCase> = {}): HttpCase => ({ kind: 'http', label, method: 'POST', path, headers, body, ...extra });
  const roll = r();
  if (roll < 0.42) {
    const body = mutatedChat(r);
    // Some clients leave mid-request or mid-stream.
    return post('chat: wrong types', '/v1/chat/completions', JSON.stringify(body), chance(r, 0.05) ? { abortAfterMs: int(r, 20) } : {});
  }
  if (roll < 0.52) return post('embeddings: wrong types', '/v1/embeddings', JSON.stringify(mutatedEmbeddings(r)));
  if (roll < 0.58) {
    const text = JSON.stringify(validChat(r));
    return post('truncated JSON', '/v1/chat/completions', text.slice(0, int(r, text.length)));
  }
  if (roll < 0.62) return post('random bytes', pick(r, ['/v1/chat/completions', '/v1/embeddings']), randomBytes(r, 1 + int(r, 2000)));
  if (roll < 0.65) {
    // Invalid UTF-8 and NULs inside an otherwise valid body.
    const bad = pick(r, [[0xc3, 0x28], [0xff, 0xfe], [0xed, 0xa0, 0x80], [0xf0, 0x28, 0x8c, 0x28], [0x00], [0xc0, 0xaf]]);
    const body = Buffer.concat([Buffer.from('{"model":"fast","messages":[{"role":"user","content":"a'), Buffer.from(bad), Buffer.from('"}]}')]);
    return post('invalid UTF-8 / NUL', '/v1/chat/completions', body);
  }
  if (roll < 0.66) {
    const depth = pick(r, [300, 5000, 100_000]);
    const closed = chance(r, 0.5);
    const nested = '['.repeat(depth) + (closed ? ']'.repeat(depth) : '');
    return post('deeply nested JSON', '/v1/chat/completions', chance(r, 0.5) ? nested : `{"model":"fast","messages":[{"role":"user","content":"x"}],"x":${nested}}`);
  }
  if (roll < 0.68) {
    // A huge string: under the bound (served) or over it (413).
    const n = chance(r, 0.5) ? env.maxBodyBytes - 200 : env.maxBodyBytes + int(r, 50_000);
    return post('huge string', '/v1/chat/completions', JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'z'.repeat(Math.max(0, n)) }] }));
  }
  if (roll < 0.7) {
    // Over maxBodyBytes with no content-length: chunked.
    const total = env.maxBodyBytes + 1 + int(r, 200_000);
    return post('chunked body over the bound', '/v1/chat/completions', () => Readable.from(chunks(total)));
  }
  if (roll < 0.82) {
    const method = pick(r, METHODS);
    const path = pick(r, PATHS);
    const body = method === 'GET' || method === 'HEAD' ? undefined : chance(r, 0.5) ? JSON.stringify(validChat(r)) : undefined;
    return { kind: 'http', label: `${method} ${path.slice(0, 40)}`, method, path, headers, body };
  }
  if (roll < 0.94) {
    // Valid body: the headers are the hostile part.
    return post('hostile headers', '/v1/chat/completions', JSON.stringify(validChat(r)));
  }
  // Valid streams, some abandoned mid-way.
  const body = JSON.stringify({ ...validChat(r), stream: true });
  return post('stream', '/v1/chat/completions', body, chance(r, 0.3) ? { abortAfterMs: int(r, 15) } : {});
}

async function* chunks(total: number): AsyncGenerator<Buffer> {
  const piece = Buffer.alloc(16 * 1024, 'q');
  for (let sent = 0; sent < total; sent += piece.length) yield piece;
}

const CRLF = '\r\n';
const req = (method: string, path: string, headers: string[], body = '') =>
  `${method} ${path} HTTP/1.1${CRLF}host: fuzz${CRLF}${headers.map((h) => h + CRLF).join('')}${CRLF}${body}`;

function rawCase(r: Rng, env: FuzzEnv): RawCase {
  const valid = JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
  const auth = `authorization: Bearer ${env.key}`;
  const garbage = (label: string, parts: RawPart[]): RawCase => ({ kind: 'raw', label, parts, serverMustClose: true });
  switch (int(r, 16)) {
    case 0:
      return garbage('bad request line', [pick(r, ['GARBAGE\r\n\r\n', 'GET\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'get / http/1.1\r\n\r\n', 'GET  / HTTP/1.1 extra\r\n\r\n', 'POST /v1/chat/completions\r\n\r\n', '\r\n\r\n\r\n\r\nX', 'GET /\u0000 HTTP/1.1\r\n\r\n', 'BREW /pot HTCPCP/1.0\r\n\r\n'])]);
    case 1:
      return garbage('binary noise', [randomBytes(r, 1 + int(r, 4000))]);
    case 2: {
      // Over the 16 KiB header limit: 431.
      const big = `x-big: ${'h'.repeat(17_000 + int(r, 30_000))}`;
      return garbage('oversized header', [req('GET', '/healthz', [big])]);
    }
    case 3: {
      const many = Array.from({ length: 1500 + int(r, 1000) }, (_, i) => `x-h${i}: ${'v'.repeat(10)}`);
      return garbage('too many headers', [req('GET', '/healthz', many)]);
    }
    case 4:
      return garbage('malformed header line', [req('GET', '/healthz', [pick(r, ['no colon here', ' leading: space', 'bad\u0000name: v', 'x: v\u0000nul', 'x: a\rb', 'x : spaced', 'content-length: -1', 'content-length: 1e3', 'content-length: 5, 6'])])]);
    case 5:
      return garbage('content-length and chunked together', [req('POST', '/v1/chat/completions', [auth, `content-length: ${valid.length}`, 'transfer-encoding: chunked'], valid)]);
    case 6:
      // The chunk is shorter than it says: the parser sees garbage where the CRLF belongs.
      return garbage('chunked body that lies (short)', [req('POST', '/v1/chat/completions', [auth, 'transfer-encoding: chunked'], `3${CRLF}${valid}${CRLF}0${CRLF}${CRLF}`)]);
    case 7:
      return garbage('chunked body with a bad size', [req('POST', '/v1/chat/completions', [auth, 'transfer-encoding: chunked'], `zz${CRLF}abc${CRLF}0${CRLF}${CRLF}`)]);
    case 8: {
      const bodies = [Buffer.from([0xff, 0xfe, 0x00, 0x7b]), Buffer.from('{"model":"fast","messages":[{"role":"user","content":"\u0000\u0001"}]}'), Buffer.concat([Buffer.from('{"model":"fast\xc3'), Buffer.from('"}')])];
      const body = pick(r, bodies);
      return { kind: 'raw', label: 'raw invalid body', parts: [req('POST', '/v1/chat/completions', [auth, 'connection: close', `content-length: ${body.length}`]), body], serverMustClose: true };
    }
    case 9:
      // Declares more than it sends, then hangs up: a client gone mid-body.
      return { kind: 'raw', label: 'hang up mid-body', parts: [req('POST', '/v1/chat/completions', [auth, 'content-length: 5000'], valid.slice(0, 20)), int(r, 5), HANG_UP], serverMustClose: false };
    case 10:
      return { kind: 'raw', label: 'hang up mid-headers', parts: ['POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-le', HANG_UP], serverMustClose: false };
    case 11: {
      // A stream abandoned after its first event.
      const body = JSON.stringify({ model: 'fast', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      return { kind: 'raw', label: 'hang up mid-stream', parts: [req('POST', '/v1/chat/completions', [auth, `content-length: ${body.length}`], body)], opts: { hangUpWhen: (t) => t.includes('data: ') }, serverMustClose: false };
    }
    case 12:
      // Pipelined: a valid request, then garbage on the same connection.
      return garbage('pipelined valid + garbage', [req('POST', '/v1/chat/completions', [auth, `content-length: ${valid.length}`], valid) + 'NOT HTTP AT ALL\r\n\r\n']);
    case 13:
      return { kind: 'raw', label: 'expect 100-continue', parts: [req('POST', '/v1/chat/completions', [auth, 'connection: close', 'expect: 100-continue', `content-length: ${valid.length}`]), 2, valid], serverMustClose: true };
    case 14:
      return garbage('HTTP/1.0 without host', [`GET /healthz HTTP/1.0${CRLF}${CRLF}`]);
    default: {
      const path = pick(r, PATHS);
      return garbage('raw odd path', [`${pick(r, METHODS)} ${path} HTTP/1.1${CRLF}host: x${CRLF}connection: close${CRLF}${CRLF}`]);
    }
  }
}

/** Case `i` of the run seeded with `seed`. */
export function fuzzCase(seed: number, i: number, env: FuzzEnv): FuzzCase {
  const r = rngFor((seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
  return chance(r, 0.78) ? httpCase(r, env) : rawCase(r, env);
}
