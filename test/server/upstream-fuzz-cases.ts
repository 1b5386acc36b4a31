/**
 * The upstream fuzz's answer generator: case `i` of a provider is a pure
 * function of (seed, provider, i), so a failure names a case that
 * `upstreamCase(seed, provider, i)` rebuilds exactly. Each case starts from a
 * real answer in the provider's own wire format (the adapters' recorded
 * fixtures: buffered, streamed, with text or a tool call, embeddings) and
 * turns it hostile: structure first (a JSON value replaced, a key deleted,
 * events duplicated, reordered, repeated after the end, a 1 MB string, an error
 * object under a 200, another status), then bytes (cut, flipped, inserted
 * garbage), then delivery (wrong content-type, a socket closed mid-body, a
 * stall the gateway's timers must end).
 */
import { readFileSync } from 'node:fs';
import { rngFor, type Rng } from './fuzz-cases.js';

export type Provider = 'openai' | 'anthropic' | 'gemini' | 'cohere' | 'ollama';
export type Kind = 'chat' | 'stream' | 'embed';
export const PROVIDERS: readonly Provider[] = ['openai', 'anthropic', 'gemini', 'cohere', 'ollama'];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface SseEvent {
  event?: string;
  data: string;
}

/** A valid answer in the provider's wire format. */
interface Base {
  label: string;
  kind: Kind;
  /** The client's request offers tools (the answer calls one). */
  tools: boolean;
  contentType: string;
  /** Buffered: the JSON body. */
  json?: Json;
  /** Streamed, SSE: the events, joined with `sep`. */
  events?: SseEvent[];
  /** Streamed, NDJSON: one JSON text a line. */
  lines?: string[];
  sep?: string;
}

export interface UpstreamCase {
  label: string;
  kind: Kind;
  tools: boolean;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Byte offsets where the body is split into separate writes. */
  splits: number[];
  /** After the body: end the response, destroy the socket, or leave it open (the gateway's timers must end it). */
  end: 'end' | 'destroy' | 'stall';
}

const fixtures = new URL('../../src/providers/', import.meta.url);
const read = (p: string) => readFileSync(new URL(p, fixtures), 'utf8');
const fixture = (p: string) => JSON.parse(read(p)) as Record<string, Json>;

function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.replace(/\r\n/g, '\n').split('\n\n')) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length > 0) out.push({ ...(event === undefined ? {} : { event }), data: data.join('\n') });
  }
  return out;
}

const SSE = 'text/event-stream; charset=utf-8';
const JSON_TYPE = 'application/json';

function openaiChunk(delta: Json, finish: string | null = null, usage?: Json): SseEvent {
  const body: Record<string, Json> = { id: 'chatcmpl-fz', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] };
  if (usage !== undefined) body.usage = usage;
  return { data: JSON.stringify(body) };
}

const OPENAI_USAGE = { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 };

function basesFor(p: Provider): Base[] {
  switch (p) {
    case 'openai': {
      const call = { id: 'call_fz1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } };
      const completion = (message: Json, finish: string): Json => ({
        id: 'chatcmpl-fz',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'm',
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage: OPENAI_USAGE,
        system_fingerprint: 'fp_1',
      });
      return [
        { label: 'chat text', kind: 'chat', tools: false, contentType: JSON_TYPE, json: completion({ role: 'assistant', content: 'Hello there, friend.', refusal: null }, 'stop') },
        { label: 'chat tool', kind: 'chat', tools: true, contentType: JSON_TYPE, json: completion({ role: 'assistant', content: null, tool_calls: [call] }, 'tool_calls') },
        {
          label: 'stream text',
          kind: 'stream',
          tools: false,
          contentType: SSE,
          sep: '\n\n',
          events: [
            openaiChunk({ role: 'assistant', content: '' }),
            openaiChunk({ content: 'Hello' }),
            openaiChunk({ content: ' there,' }),
            openaiChunk({ content: ' friend.' }),
            openaiChunk({}, 'stop'),
            { data: JSON.stringify({ id: 'chatcmpl-fz', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'm', choices: [], usage: OPENAI_USAGE }) },
            { data: '[DONE]' },
          ],
        },
        {
          label: 'stream tool',
          kind: 'stream',
          tools: true,
          contentType: SSE,
          sep: '\n\n',
          events: [
            openaiChunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_fz1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
            openaiChunk({ tool_calls: [{ index: 0, function: { arguments: '{"loca' } }] }),
            openaiChunk({ tool_calls: [{ index: 0, function: { arguments: 'tion":"Paris"}' } }] }),
            openaiChunk({}, 'tool_calls'),
            { data: '[DONE]' },
          ],
        },
        {
          label: 'embeddings',
          kind: 'embed',
          tools: false,
          contentType: JSON_TYPE,
          json: {
            object: 'list',
            data: [
              { object: 'embedding', index: 0, embedding: [0.0123, -0.0456, 0.0789] },
              { object: 'embedding', index: 1, embedding: [-0.0321, 0.0654, -0.0987] },
            ],
            model: 'm',
            usage: { prompt_tokens: 4, total_tokens: 4 },
          },
        },
      ];
    }
    case 'anthropic':
      return [
        { label: 'chat text', kind: 'chat', tools: false, contentType: JSON_TYPE, json: fixture('anthropic/fixtures/text.json').anthropicResponse! },
        { label: 'chat tool', kind: 'chat', tools: true, contentType: JSON_TYPE, json: fixture('anthropic/fixtures/tools.json').anthropicResponse! },
        { label: 'stream text', kind: 'stream', tools: false, contentType: SSE, sep: '\n\n', events: parseSse(fixture('anthropic/fixtures/stream-text.json').sse as string) },
        { label: 'stream tool', kind: 'stream', tools: true, contentType: SSE, sep: '\n\n', events: parseSse(fixture('anthropic/fixtures/stream-tool-use.json').sse as string) },
      ];
    case 'gemini': {
      const events = (p: string) => (JSON.parse(read(p)) as Json[]).map((e) => ({ data: JSON.stringify(e) }));
      return [
        { label: 'chat text', kind: 'chat', tools: false, contentType: JSON_TYPE, json: fixture('gemini/fixtures/response-text.json') },
        { label: 'chat tool', kind: 'chat', tools: true, contentType: JSON_TYPE, json: fixture('gemini/fixtures/response-function-call.json') },
        // Google separates its events with CRLF pairs.
        { label: 'stream text', kind: 'stream', tools: false, contentType: 'text/event-stream', sep: '\r\n\r\n', events: events('gemini/fixtures/stream-text.json') },
        { label: 'stream tool', kind: 'stream', tools: true, contentType: 'text/event-stream', sep: '\r\n\r\n', events: events('gemini/fixtures/stream-function-call.json') },
        {
          label: 'embeddings',
          kind: 'embed',
          tools: false,
          contentType: JSON_TYPE,
          json: { embeddings: [{ values: [0.0123, -0.0456, 0.0789] }, { values: [-0.0321, 0.0654, -0.0987] }] },
        },
      ];
    }
    case 'cohere':
      return [
        { label: 'chat text', kind: 'chat', tools: false, contentType: JSON_TYPE, json: fixture('cohere/fixtures/chat-text.json') },
        { label: 'chat tool', kind: 'chat', tools: true, contentType: JSON_TYPE, json: fixture('cohere/fixtures/chat-tool-call.json') },
        { label: 'stream text', kind: 'stream', tools: false, contentType: 'text/event-stream', sep: '\n\n', events: parseSse(read('cohere/fixtures/stream-text.sse')) },
        { label: 'stream tool', kind: 'stream', tools: true, contentType: 'text/event-stream', sep: '\n\n', events: parseSse(read('cohere/fixtures/stream-tool-call.sse')) },
        { label: 'embeddings', kind: 'embed', tools: false, contentType: JSON_TYPE, json: fixture('cohere/fixtures/embed.json') },
      ];
    case 'ollama': {
      const lines = (p: string) => read(p).split('\n').filter((l) => l.trim() !== '');
      return [
        { label: 'chat text', kind: 'chat', tools: false, contentType: JSON_TYPE, json: fixture('ollama/fixtures/chat-text.json') },
        { label: 'chat tool', kind: 'chat', tools: true, contentType: JSON_TYPE, json: fixture('ollama/fixtures/chat-tool-call.json') },
        { label: 'stream text', kind: 'stream', tools: false, contentType: 'application/x-ndjson', lines: lines('ollama/fixtures/stream-text.ndjson') },
        { label: 'stream tool', kind: 'stream', tools: true, contentType: 'application/x-ndjson', lines: lines('ollama/fixtures/stream-tool-call.ndjson') },
        { label: 'embeddings', kind: 'embed', tools: false, contentType: JSON_TYPE, json: fixture('ollama/fixtures/embed.json') },
      ];
    }
  }
}

const BASES = new Map(PROVIDERS.map((p) => [p, basesFor(p)]));
export const baseCount = (p: Provider) => BASES.get(p)!.length;

/** The provider's own error body for `status`. */
function errorBody(p: Provider, status: number, message: string): Json {
  switch (p) {
    case 'openai':
      return { error: { message, type: status === 429 ? 'rate_limit_error' : 'invalid_request_error', param: null, code: status === 429 ? 'rate_limit_exceeded' : null } };
    case 'anthropic':
      return { type: 'error', error: { type: status === 529 ? 'overloaded_error' : status === 429 ? 'rate_limit_error' : 'api_error', message }, request_id: 'req_fz' };
    case 'gemini':
      return { error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : status === 400 ? 'INVALID_ARGUMENT' : 'INTERNAL' } };
    case 'cohere':
      return { id: 'fz-err', message };
    case 'ollama':
      return { error: message };
  }
}

/** The error as an event of the provider's stream. */
function errorEvent(p: Provider, status: number, message: string): SseEvent {
  const data = JSON.stringify(errorBody(p, status, message));
  return p === 'anthropic' ? { event: 'error', data } : { data };
}

const int = (r: Rng, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, xs.length)]!;
const chance = (r: Rng, p: number) => r() < p;

function deep(depth: number, asArray: boolean): string {
  return asArray ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

const HUGE = 'x'.repeat(1 << 20);

/** Hostile replacements for a JSON value; `raw` ones are spliced in as text (too deep to build as objects). */
function hostileValue(r: Rng): { value?: Json; raw?: string; label: string } {
  switch (int(r, 15)) {
    case 0:
      return { value: null, label: 'null' };
    case 1:
      return { value: pick(r, [0, 1, 7, 3.5]), label: 'number' };
    case 2:
      return { value: pick(r, [1e308, 9007199254740993, 1e21, 2 ** 64]), label: 'huge number' };
    case 3:
      return { value: -1, label: '-1' };
    case 4:
      return { value: pick(r, ['', 'x', 'stop', 'null', '{"a":1}', '\u0000', '\ud800', 'STOP', 'tool_use', '__proto__']), label: 'string' };
    case 5:
      return { value: [], label: 'empty array' };
    case 6:
      return { value: [null, null], label: 'array of nulls' };
    case 7:
      return { value: { a: 1, __proto__x: null, constructor: 'x' }, label: 'object' };
    case 8:
      return { value: {}, label: 'empty object' };
    case 9:
      return { raw: deep(pick(r, [200, 5_000, 50_000]), chance(r, 0.5)), label: 'deeply nested' };
    case 10:
      return { value: true, label: 'true' };
    case 11:
      return { value: [{ index: 0 }, 5, 'x', null], label: 'mixed array' };
    case 12:
      return { value: HUGE, label: 'huge string' };
    case 13:
      // What Python's json.dumps writes for a float that is no number (a server's -inf logprob).
      return { raw: pick(r, ['NaN', 'Infinity', '-Infinity']), label: 'python float' };
    default:
      return { value: Array.from({ length: 3 }, () => ({ index: int(r, 3), type: 'x' })), label: 'array of objects' };
  }
}

type Path = (string | number)[];
function paths(v: Json, at: Path = [], out: Path[] = []): Path[] {
  if (at.length > 0) out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) paths(v[k]!, [...at, k], out);
  return out;
}

function getAt(v: Json, path: Path): Json {
  let cur = v;
  for (const k of path) cur = (cur as Record<string | number, Json>)[k]!;
  return cur;
}

// As JSON.stringify writes the placeholder string.
const RAW_MARK = '"\\u0001RAW\\u0001"';

/** One structural mutation of a JSON text; the raw splice goes in as text. */
function mutateJson(r: Rng, text: string, notes: string[]): string {
  try {
    return mutateJsonOnce(r, text, notes);
  } catch {
    // An earlier mutation nested it too deep to walk: leave it so.
    notes.push('(too deep to mutate again)');
    return text;
  }
}

function mutateJsonOnce(r: Rng, text: string, notes: string[]): string {
  let doc: Json;
  try {
    doc = JSON.parse(text) as Json;
  } catch {
    notes.push('(not JSON)');
    return text;
  }
  const all = paths(doc);
  if (all.length === 0) return text;
  const op = int(r, 10);
  if (op < 3) {
    // delete a key (or an array item)
    const path = pick(r, all);
    const parent = getAt(doc, path.slice(0, -1)) as Record<string | number, Json>;
    const k = path.at(-1)!;
    if (Array.isArray(parent)) parent.splice(k as number, 1);
    else delete parent[k];
    notes.push(`delete ${path.join('.')}`);
    return JSON.stringify(doc);
  }
  if (op === 3) {
    const strings = all.filter((p) => typeof getAt(doc, p) === 'string');
    const path = strings.length > 0 ? pick(r, strings) : pick(r, all);
    (getAt(doc, path.slice(0, -1)) as Record<string | number, Json>)[path.at(-1)!] = HUGE;
    notes.push(`1 MB string at ${path.join('.')}`);
    return JSON.stringify(doc);
  }
  const path = pick(r, all);
  const h = hostileValue(r);
  (getAt(doc, path.slice(0, -1)) as Record<string | number, Json>)[path.at(-1)!] = h.raw === undefined ? h.value! : '\u0001RAW\u0001';
  notes.push(`${path.join('.')} = ${h.label}`);
  const out = JSON.stringify(doc);
  return h.raw === undefined ? out : out.replace(RAW_MARK, h.raw);
}

/** The index of the event that finishes the answer. */
function finishIndex(texts: string[]): number {
  for (let i = texts.length - 1; i >= 0; i--) {
    if (/"finish_reason":"|"stop_reason":"|finishReason|message-end|message_stop|"done":true/.test(texts[i]!)) return i;
  }
  return texts.length - 1;
}

function structural(r: Rng, p: Provider, base: Base, notes: string[]): { json?: string; events?: SseEvent[]; lines?: string[] } {
  if (base.json !== undefined) {
    let json = JSON.stringify(base.json);
    const op = int(r, 10);
    if (op === 0) {
      json = JSON.stringify(errorBody(p, pick(r, [400, 429, 500, 503, 529]), 'fuzz: an error under a 200'));
      notes.push('error object under 200');
      if (chance(r, 0.5)) json = mutateJson(r, json, notes);
    } else if (op === 1) {
      json = pick(r, ['', 'null', '[]', '{}', '"text"', '42', '[{}]', 'true']);
      notes.push(`body ${JSON.stringify(json)}`);
    } else if (op === 2) {
      notes.push('none');
    } else {
      for (let n = 1 + int(r, 3); n > 0; n--) json = mutateJson(r, json, notes);
    }
    return { json };
  }
  const items: SseEvent[] = base.events ? base.events.map((e) => ({ ...e })) : base.lines!.map((data) => ({ data }));
  for (let n = 1 + int(r, 3); n > 0 && items.length > 0; n--) {
    const op = int(r, 11);
    const i = int(r, items.length);
    switch (op) {
      case 0:
      case 1:
      case 2:
        notes.push(`event ${i}:`);
        items[i] = { ...items[i]!, data: mutateJson(r, items[i]!.data, notes) };
        break;
      case 3:
        items.splice(i, 0, { ...items[i]! });
        notes.push(`duplicate event ${i}`);
        break;
      case 4: {
        const j = int(r, items.length);
        [items[i], items[j]] = [items[j]!, items[i]!];
        notes.push(`swap events ${i}, ${j}`);
        break;
      }
      case 5:
        items.splice(i, 1);
        notes.push(`drop event ${i}`);
        break;
      case 6: {
        const f = finishIndex(items.map((e) => e.data));
        items.splice(f + 1 + int(r, items.length - f), 0, { ...items[f]! });
        notes.push(`repeat finish event ${f}`);
        break;
      }
      case 7:
        items.push({ ...items[int(r, items.length)]! }, { ...items[1 % items.length]! });
        notes.push('events after the end');
        break;
      case 8:
        items.splice(i, 0, errorEvent(p, pick(r, [400, 429, 500, 503, 529]), 'fuzz: error event'));
        notes.push(`error event at ${i}`);
        break;
      case 9:
        items.splice(i, 0, pick(r, [{ data: '' }, { data: 'null' }, { data: '[]' }, { data: '{}' }, { data: '"x"' }, { data: '[DONE]' }, { event: 'ping', data: '{}' }, { event: 'error', data: 'nope' }]));
        notes.push(`odd event at ${i}`);
        break;
      default:
        items.splice(i, 0, { data: `{"id":"x","choices":[{"index":0,"delta":{"content":"${'y'.repeat(1 << 20)}"}}]}` });
        notes.push(`1 MB event at ${i}`);
    }
  }
  return base.events ? { events: items } : { lines: items.map((e) => e.data) };
}

function serialize(s: { json?: string; events?: SseEvent[]; lines?: string[] }, sep: string): string {
  if (s.json !== undefined) return s.json;
  if (s.lines) return s.lines.map((l) => `${l}\n`).join('');
  const eol = sep === '\r\n\r\n' ? '\r\n' : '\n';
  return s.events!.map((e) => `${e.event === undefined ? '' : `event: ${e.event}${eol}`}${e.data.split('\n').map((d) => `data: ${d}`).join(eol)}${sep}`).join('');
}

const INSERTS: (string | number[])[] = [[0xff], [0xfe, 0xff], [0xc3], [0xe2, 0x82], [0x00], '\r', '\n', '\r\n', 'data: ', 'data: {', '\n\ndata: garbage\n\n', 'event: error\n', '\ufeff', 'data: [DONE]\n\n', '\n\n', '}', '"', ':keepalive\n\n'];

function byteLevel(r: Rng, body: Buffer, notes: string[]): Buffer {
  let b = body;
  const op = int(r, 10);
  if (op < 2 && b.length > 0) {
    const at = int(r, b.length);
    notes.push(`truncate at ${at}/${b.length}`);
    return b.subarray(0, at);
  }
  if (op < 4 && b.length > 0) {
    b = Buffer.from(b);
    for (let n = 1 + int(r, 4); n > 0; n--) b[int(r, b.length)] = int(r, 256);
    notes.push('flip bytes');
    return b;
  }
  if (op < 6) {
    for (let n = 1 + int(r, 3); n > 0; n--) {
      const ins = pick(r, INSERTS);
      const at = int(r, b.length + 1);
      b = Buffer.concat([b.subarray(0, at), typeof ins === 'string' ? Buffer.from(ins) : Buffer.from(ins), b.subarray(at)]);
      notes.push(`insert ${JSON.stringify(typeof ins === 'string' ? ins : ins.map((x) => x.toString(16)))} at ${at}`);
    }
    return b;
  }
  return b;
}

const STATUSES = [201, 202, 204, 206, 301, 302, 304, 400, 401, 402, 403, 404, 405, 406, 408, 409, 410, 413, 415, 418, 422, 429, 431, 451, 498, 499, 500, 501, 502, 503, 504, 520, 529, 599];
const CONTENT_TYPES = ['text/html', 'text/plain', 'application/json', 'text/event-stream', 'application/x-ndjson', 'application/octet-stream', 'application/json; charset=latin1', ''];

/**
 * Case `i` for provider `p`. The first `baseCount(p)` cases are the base answers unmutated
 * (replayed at the end, they must succeed: the fixtures reach the gateway as they should).
 */
export function upstreamCase(seed: number, p: Provider, i: number): UpstreamCase {
  const bases = BASES.get(p)!;
  const r = rngFor((seed ^ Math.imul(PROVIDERS.indexOf(p) + 1, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)) >>> 0);
  const base = i < bases.length ? bases[i]! : pick(r, bases);
  const notes: string[] = [];
  const headers: Record<string, string> = { 'content-type': base.contentType };
  if (i < bases.length) {
    const body = Buffer.from(serialize(base.json !== undefined ? { json: JSON.stringify(base.json) } : { events: base.events, lines: base.lines }, base.sep ?? ''));
    return { label: `${p} ${base.label} unmutated`, kind: base.kind, tools: base.tools, status: 200, headers, body, splits: [], end: 'end' };
  }
  let status = 200;
  let text: string;
  if (chance(r, 0.15)) {
    // Another status, its error body the provider's, mutated or not, or not an error body at all.
    status = pick(r, STATUSES);
    const which = int(r, 4);
    text = which === 0 ? '<html><body>502 Bad Gateway</body></html>' : which === 1 ? '' : JSON.stringify(errorBody(p, status, 'fuzz: upstream says no'));
    if (which >= 2) for (let n = 1 + int(r, 2); n > 0; n--) text = mutateJson(r, text, notes);
    headers['content-type'] = which === 0 ? 'text/html' : JSON_TYPE;
    if (chance(r, 0.5)) headers['retry-after'] = pick(r, ['0', '1', '-1', 'abc', '99999999999', 'Wed, 21 Oct 2015 07:28:00 GMT', '1.5', '']);
    notes.push(`status ${status}`);
  } else {
    text = serialize(structural(r, p, base, notes), base.sep ?? '');
  }
  let body = chance(r, 0.6) ? byteLevel(r, Buffer.from(text), notes) : Buffer.from(text);
  if (chance(r, 0.12)) {
    headers['content-type'] = pick(r, CONTENT_TYPES);
    if (headers['content-type'] === '') delete headers['content-type'];
    notes.push(`content-type ${JSON.stringify(headers['content-type'] ?? null)}`);
  }
  if (chance(r, 0.03)) {
    headers['content-encoding'] = pick(r, ['gzip', 'br', 'identity', 'x-nope']);
    notes.push(`content-encoding ${headers['content-encoding']}`);
  }
  let end: UpstreamCase['end'] = 'end';
  const d = r();
  if (d < 0.1) {
    end = 'destroy';
    if (body.length > 0) body = body.subarray(0, int(r, body.length));
    notes.push(`socket closed after ${body.length} bytes`);
  } else if (d < 0.13) {
    end = 'stall';
    if (body.length > 0) body = body.subarray(0, int(r, body.length));
    notes.push(`stall after ${body.length} bytes`);
  } else if (d < 0.16) {
    // A content-length the body falls short of, then the socket closes.
    headers['content-length'] = String(body.length + 1 + int(r, 100));
    end = 'destroy';
    notes.push(`content-length ${headers['content-length']} for ${body.length} bytes`);
  }
  const splits = Array.from({ length: int(r, 4) }, () => int(r, body.length + 1)).sort((a, b) => a - b);
  return { label: `${p} ${base.label}: ${notes.join('; ').slice(0, 300)}`, kind: base.kind, tools: base.tools, status, headers, body, splits, end };
}
