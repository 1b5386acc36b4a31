/**
 * The mock upstream's pre-serialised stream: each SSE event one HTTP chunk
 * whose size line is the event's length in bytes (hex), in the order a
 * model's stream comes: role, content, finish, usage, [DONE].
 */
import { describe, expect, it } from 'vitest';
import { asLibrary } from './as-library.js';

const { frame, streamFrames } = await asLibrary(() => import('../../bench/mock-upstream.js'));

/** The chunks of a chunked body, checking each size line against its data. */
function dechunk(body: string): string[] {
  const out: string[] = [];
  let rest = Buffer.from(body, 'latin1');
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.subarray(0, eol).toString('latin1'), 16);
    if (size === 0) {
      expect(rest.subarray(eol).toString('latin1')).toBe('\r\n\r\n');
      return out;
    }
    out.push(rest.subarray(eol + 2, eol + 2 + size).toString('utf8'));
    expect(rest.subarray(eol + 2 + size, eol + 4 + size).toString('latin1')).toBe('\r\n');
    rest = rest.subarray(eol + 4 + size);
  }
}

describe('frame', () => {
  it("sizes a chunk by the event's bytes, in hex", () => {
    // `data: x\n\n` is 9 bytes.
    expect(frame('x').toString()).toBe('9\r\ndata: x\n\n\r\n');
    // 6 + 20 + 2 = 28 bytes: 0x1c.
    expect(frame('abcdefghijklmnopqrst').toString().startsWith('1c\r\n')).toBe(true);
    // é is two bytes in UTF-8: 10, not 9.
    expect(frame('é').toString().startsWith('a\r\n')).toBe(true);
  });
});

describe('streamFrames', () => {
  it('one write each for the head and role, every content chunk, the finish, the usage and [DONE] with the last chunk', () => {
    const frames = streamFrames(3);
    expect(frames).toHaveLength(3 + 4);
    const whole = Buffer.concat(frames).toString('latin1');
    const headEnd = whole.indexOf('\r\n\r\n');
    const head = whole.slice(0, headEnd).split('\r\n');
    expect(head[0]).toBe('HTTP/1.1 200 OK');
    expect(head).toContain('content-type: text/event-stream');
    expect(head).toContain('transfer-encoding: chunked');

    const events = dechunk(whole.slice(headEnd + 4));
    for (const e of events) expect(e).toMatch(/^data: .*\n\n$/s);
    const data = events.map((e) => e.slice(6, -2));
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.slice(1, 4).map((c) => c.choices[0].delta.content)).toEqual([' word', ' word', ' word']);
    expect(chunks[4].choices[0].finish_reason).toBe('stop');
    expect(chunks[5].choices).toEqual([]);
    expect(chunks[5].usage).toEqual({ prompt_tokens: 24, completion_tokens: 3, total_tokens: 27 });
    for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
  });

  it('a stream of 200 has 200 content events and counts them in its usage', () => {
    const frames = streamFrames(200);
    expect(frames).toHaveLength(204);
    const usage = JSON.parse(frames[202]!.toString().split('\r\n')[1]!.slice(6)).usage;
    expect(usage.completion_tokens).toBe(200);
  });
});
