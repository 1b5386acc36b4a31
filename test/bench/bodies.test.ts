/** The request bodies every path is sent: the same for each but for `model`. */
import { describe, expect, it } from 'vitest';
import { chatBody, type CaseName } from '../../bench/bodies.js';

const CASES: CaseName[] = ['buffered', 'stream20', 'stream200', 'body100k', 'hold'];

describe('chatBody', () => {
  it.each(CASES)('%s: a chat request for the model given, system then user', (c) => {
    const b = JSON.parse(chatBody(c, 'chat'));
    expect(b.model).toBe('chat');
    expect(b.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(b.max_tokens).toBe(256);
    expect(b.temperature).toBe(0.2);
  });

  it('streams, with usage in the last event, exactly for the streaming cases and the hold', () => {
    for (const c of CASES) {
      const b = JSON.parse(chatBody(c, 'm'));
      if (c === 'stream20' || c === 'stream200' || c === 'hold') {
        expect(b.stream, c).toBe(true);
        expect(b.stream_options, c).toEqual({ include_usage: true });
      } else {
        // Absent, not false: a buffered request as clients send it.
        expect('stream' in b, c).toBe(false);
        expect('stream_options' in b, c).toBe(false);
      }
    }
  });

  it('differs between paths only in model', () => {
    for (const c of CASES) expect(chatBody(c, 'gpt-4o-mini').replace('"gpt-4o-mini"', '"chat"'), c).toBe(chatBody(c, 'chat'));
  });

  it('body100k carries about 100 KB of prose after its instruction; the others a short question', () => {
    const big = JSON.parse(chatBody('body100k', 'm')).messages[1].content as string;
    const prefix = 'Summarise this document in one sentence:\n\n';
    expect(big.startsWith(prefix)).toBe(true);
    const doc = big.slice(prefix.length);
    // Words are added until 100 KiB are reached: at most one word (and its space) over.
    expect(doc.length).toBeGreaterThanOrEqual(100 * 1024 - 1);
    expect(doc.length).toBeLessThan(100 * 1024 + 16);
    expect(doc).toMatch(/^[a-z]+( [a-z]+)*$/);
    // Every word of the sentence is used (its 24 words, 'and' twice, cycled 7 apart), not a few repeated.
    expect(new Set(doc.split(' ')).size).toBe(23);
    expect(Buffer.byteLength(chatBody('body100k', 'm'))).toBeGreaterThan(100 * 1024);
    expect(JSON.parse(chatBody('buffered', 'm')).messages[1].content).toBe('In one short sentence, what does a load balancer do?');
    expect(Buffer.byteLength(chatBody('buffered', 'm'))).toBeLessThan(400);
  });
});
