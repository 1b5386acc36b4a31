import { describe, expect, it } from 'vitest';
import { jsonReply } from './json-reply.js';

const schema = (s: Record<string, unknown>) => ({ type: 'json_schema' as const, json_schema: { name: 'x', schema: s, strict: true } });

describe('jsonReply', () => {
  it('leaves text answers alone', () => {
    expect(jsonReply(undefined, 'hi')).toBeUndefined();
    expect(jsonReply(null, 'hi')).toBeUndefined();
    expect(jsonReply({ type: 'text' }, 'hi')).toBeUndefined();
  });

  it('wraps the reply for json_object and for a json_schema without a schema', () => {
    expect(JSON.parse(jsonReply({ type: 'json_object' }, 'say "hi"')!)).toEqual({ reply: 'say "hi"' });
    expect(JSON.parse(jsonReply({ type: 'json_schema', json_schema: { name: 'x' } }, 'hi')!)).toEqual({ reply: 'hi' });
  });

  it('writes an instance of the schema: every property, enums, unions, arrays, numbers, local refs', () => {
    const out = JSON.parse(
      jsonReply(
        schema({
          type: 'object',
          properties: {
            title: { type: 'string' },
            mood: { type: 'string', enum: ['happy', 'sad'] },
            count: { type: 'integer', minimum: 3 },
            score: { type: 'number' },
            ok: { type: 'boolean' },
            maybe: { type: ['string', 'null'] },
            either: { anyOf: [{ type: 'null' }, { type: 'number' }] },
            fixed: { const: 'v1' },
            tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
            step: { $ref: '#/$defs/Step' },
            nothing: { type: 'null' },
          },
          required: ['title'],
          additionalProperties: false,
          $defs: { Step: { type: 'object', properties: { n: { type: 'integer' } } } },
        }),
        'hi',
      )!,
    );
    expect(out).toEqual({
      title: 'hi',
      mood: 'happy',
      count: 3,
      score: 1,
      ok: true,
      maybe: 'hi',
      either: 1,
      fixed: 'v1',
      tags: ['hi', 'hi'],
      step: { n: 1 },
      nothing: null,
    });
  });

  it('stops a recursive schema at a bounded depth, and a ref that leads nowhere is null', () => {
    const tree = schema({ $ref: '#/$defs/Node', $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' }, lost: { $ref: '#/nope' } } } } });
    const text = jsonReply(tree, 'x')!;
    let node = JSON.parse(text) as { child: unknown; lost: unknown } | null;
    let levels = 0;
    while (node !== null) {
      expect(node.lost).toBeNull();
      node = node.child as typeof node;
      levels++;
    }
    expect(levels).toBeGreaterThan(2);
    expect(levels).toBeLessThan(20);
  });

  it('bounds the values of a reply whatever the schema: a ref back to a wide object would make millions', () => {
    const properties = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, { $ref: '#/$defs/a' }]));
    const text = jsonReply(schema({ $ref: '#/$defs/a', $defs: { a: { type: 'object', properties } } }), 'x')!;
    // Each value is at least a few bytes: 5,000 of them stay far below a megabyte (unbounded: ~11 MB).
    expect(text.length).toBeLessThan(200_000);
    expect(Object.keys(JSON.parse(text) as object)).toHaveLength(10);
  });
});
