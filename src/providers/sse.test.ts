import { describe, expect, it } from 'vitest';
import { seededRandom } from '../core/clock.js';
import { UpstreamError } from '../resilience/upstream-error.js';
import { MAX_EVENT_CHARS, NdjsonParser, SseParser, type SseEvent } from './sse.js';

function sse(chunks: string[], end = true): { events: SseEvent[]; comments: number } {
  const p = new SseParser();
  for (const c of chunks) p.push(c);
  if (end) p.end();
  return { events: p.events, comments: p.comments };
}

/** Every way to cut `text` in two, plus one-character feeding and seeded random chunkings. */
function chunkings(text: string): string[][] {
  const out: string[][] = [[text]];
  for (let i = 0; i <= text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  out.push([...text]);
  const r = seededRandom(text.length);
  for (let k = 0; k < 50; k++) {
    const chunks: string[] = [];
    let i = 0;
    while (i < text.length) {
      const n = 1 + Math.floor(r() * 12);
      chunks.push(text.slice(i, i + n));
      i += n;
    }
    out.push(chunks);
  }
  return out;
}

// One transcript exercising every rule: comments (keep-alives), event names, multi-line
// data, no space after the colon, an empty data line, id/retry fields, unknown fields,
// a field without a colon, and a blank line that dispatches nothing.
const LINES = [
  ': keep-alive',
  '',
  'event: message_start',
  'data: {"type":"message_start"}',
  '',
  'data: line one',
  'data: line two',
  'data:',
  'data:  two leading spaces keep one',
  '',
  'data:no-space',
  '',
  ': another comment',
  'event: ping',
  'data',
  '',
  'id: 7',
  'retry: 100',
  'whatever: ignored',
  'data: after id and retry',
  '',
  '',
  'data: [DONE]',
  '',
  '',
];
const EXPECTED: SseEvent[] = [
  { event: 'message_start', data: '{"type":"message_start"}', multiline: false },
  { event: undefined, data: 'line one\nline two\n\n two leading spaces keep one', multiline: true },
  { event: undefined, data: 'no-space', multiline: false },
  { event: 'ping', data: '', multiline: false },
  { event: undefined, data: 'after id and retry', multiline: false },
  { event: undefined, data: '[DONE]', multiline: false },
];

describe('SseParser', () => {
  for (const [name, eol] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    it(`${name}: the same events however the transcript is chunked`, () => {
      const transcript = LINES.join(eol);
      const all = chunkings(transcript);
      expect(all.length).toBeGreaterThan(transcript.length);
      for (const chunks of all) {
        const got = sse(chunks);
        if (JSON.stringify(got.events) !== JSON.stringify(EXPECTED) || got.comments !== 2) {
          // Name the failing cut instead of dumping hundreds of passes.
          expect({ chunks, ...got }).toEqual({ chunks, events: EXPECTED, comments: 2 });
        }
      }
    });
  }

  it('mixed line endings in one stream', () => {
    expect(sse(['data: a\r\n\r\ndata: b\n\ndata: c\r\r']).events.map((e) => e.data)).toEqual(['a', 'b', 'c']);
  });

  it('events are available as soon as their blank line arrives, before end()', () => {
    const p = new SseParser();
    p.push('data: one\n');
    expect(p.events).toEqual([]);
    p.push('\ndata: tw');
    expect(p.events).toEqual([{ event: undefined, data: 'one', multiline: false }]);
    p.push('o\n\n');
    expect(p.events.map((e) => e.data)).toEqual(['one', 'two']);
  });

  it('a CR at the end of a chunk waits: it may be half of a CRLF', () => {
    const p = new SseParser();
    p.push('data: x\r');
    p.push('\n');
    p.push('\r');
    expect(p.events).toEqual([]); // that last CR could still become CRLF
    p.push('\n');
    expect(p.events).toEqual([{ event: undefined, data: 'x', multiline: false }]);
  });

  it('the caller drains events by splicing; the parser keeps appending', () => {
    const p = new SseParser();
    p.push('data: a\n\ndata: b\n\n');
    expect(p.events.splice(0).map((e) => e.data)).toEqual(['a', 'b']);
    p.push('data: c\n\n');
    expect(p.events.map((e) => e.data)).toEqual(['c']);
  });

  describe('end(): a final event without its blank line still counts', () => {
    it.each([
      ['no line end at all', 'data: tail'],
      ['LF', 'data: tail\n'],
      ['CRLF', 'data: tail\r\n'],
      ['after a complete event', 'data: first\n\ndata: tail'],
    ])('%s', (_name, text) => {
      const got = sse([text]).events;
      expect(got.at(-1)).toEqual({ event: undefined, data: 'tail', multiline: false });
    });

    it('keeps the event name of the final event', () => {
      expect(sse(['event: done\ndata: {}']).events).toEqual([{ event: 'done', data: '{}', multiline: false }]);
    });

    it('a trailing comment or empty input yields nothing', () => {
      expect(sse([': bye']).events).toEqual([]);
      expect(sse([]).events).toEqual([]);
      expect(sse(['event: only-a-name\n']).events).toEqual([]);
    });

    it('without end(), an unterminated event is not dispatched', () => {
      expect(sse(['data: tail\n'], false).events).toEqual([]);
    });

    it('end() twice does not duplicate the last event', () => {
      const p = new SseParser();
      p.push('data: x');
      p.end();
      p.end();
      expect(p.events).toHaveLength(1);
    });

    // Regression (was a bug): end() hands the whole remaining buffer to line(), so with CR line ends the
    // final line's own "\r" (held back as a possible CRLF half) ends up inside the data.
    it('CR: the held-back CR of the final line is a line end, not data', () => {
      expect(sse(['data: tail\r']).events).toEqual([{ event: undefined, data: 'tail', multiline: false }]);
    });
  });
});

describe('NdjsonParser', () => {
  const ITEMS = ['{"model":"llama3","message":{"content":"He"},"done":false}', '{"message":{"content":"llo"},"done":false}', '{"done":true,"eval_count":2}'];

  for (const [name, eol] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
  ] as const) {
    it(`${name}: the same lines however the stream is chunked`, () => {
      const text = ITEMS.join(eol) + eol;
      for (const chunks of chunkings(text)) {
        const p = new NdjsonParser();
        for (const c of chunks) p.push(c);
        p.end();
        if (JSON.stringify(p.lines) !== JSON.stringify(ITEMS)) expect({ chunks, lines: p.lines }).toEqual({ chunks, lines: ITEMS });
      }
    });
  }

  it('a line is available once its newline arrives', () => {
    const p = new NdjsonParser();
    p.push('{"a":');
    expect(p.lines).toEqual([]);
    p.push('1}\n{"b"');
    expect(p.lines).toEqual(['{"a":1}']);
  });

  it('skips blank and whitespace-only lines, trims the rest', () => {
    const p = new NdjsonParser();
    p.push('\n  \n {"a":1} \n\n\t\n{"b":2}\n');
    p.end();
    expect(p.lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('end() flushes a final line without a newline, once', () => {
    const p = new NdjsonParser();
    p.push('{"a":1}\n{"done":true}');
    expect(p.lines).toEqual(['{"a":1}']);
    p.end();
    p.end();
    expect(p.lines).toEqual(['{"a":1}', '{"done":true}']);
  });
});

describe('long lines (an upstream that streams one line for megabytes)', () => {
  const MB = 1024 * 1024;
  /** `total` characters of line fed in network-sized pieces, after `head`. */
  function feed(p: { push(text: string): void }, head: string, total: number, piece = 16 * 1024): void {
    p.push(head);
    const chunk = 'a'.repeat(piece);
    for (let n = 0; n < total; n += piece) p.push(chunk);
  }

  it('costs the line\'s length, not its square: an 8 MB line in 16 KB reads parses at once', () => {
    const started = performance.now();
    const sse = new SseParser();
    feed(sse, 'data: {"x":"', 8 * MB);
    sse.push('"}\r');
    sse.push('\n\ndata: next\n\n');
    const ndjson = new NdjsonParser();
    feed(ndjson, '{"x":"', 8 * MB);
    ndjson.push('"}\n{"b":1}\n');
    // Linear: a few tens of ms; searching the whole buffer on every read took seconds.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(sse.events.map((e) => e.data.length)).toEqual([8 * MB + 8, 4]);
    expect(ndjson.lines.map((l) => l.length)).toEqual([8 * MB + 8, 7]);
  });

  it('a CR held back at the end of a read still ends its line when the next read holds no line end', () => {
    const p = new SseParser();
    p.push('data: one\r');
    p.push('\r');
    p.push('data: two');
    p.push(' more');
    p.push('\n\n');
    expect(p.events.map((e) => e.data)).toEqual(['one', 'two more']);
  });

  const isTooLong = (err: unknown) => err instanceof UpstreamError && err.category === 'server' && /longer than/.test(err.message);

  it('a line that outgrows MAX_EVENT_CHARS throws a server UpstreamError instead of filling memory', () => {
    expect(() => feed(new SseParser(), 'data: "', MAX_EVENT_CHARS + MB, MB)).toThrow(expect.objectContaining({ category: 'server' }));
    expect(() => feed(new NdjsonParser(), '{"x":"', MAX_EVENT_CHARS + MB, MB)).toThrow(UpstreamError);
    // The same in a single read, and as a comment line.
    let err: unknown;
    try {
      new SseParser().push(`: ${'k'.repeat(MAX_EVENT_CHARS + 1)}`);
    } catch (e) {
      err = e;
    }
    expect(isTooLong(err)).toBe(true);
  });

  it('so does an event whose data lines add up past it, each line short', () => {
    const p = new SseParser();
    const line = `data: ${'d'.repeat(MB)}\n`;
    let err: unknown;
    try {
      for (let i = 0; i < 40; i++) p.push(line);
    } catch (e) {
      err = e;
    }
    expect(isTooLong(err)).toBe(true);
    expect(p.events).toEqual([]);
  });
});
