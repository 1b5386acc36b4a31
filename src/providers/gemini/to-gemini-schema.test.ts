import { describe, expect, it } from 'vitest';
import { MAX_INLINED_NODES, schemaBudget, toGeminiParameters, toGeminiSchema } from './to-gemini-schema.js';

/** `levels` definitions of `fan` properties, each referring to the next: fan^levels nodes once inlined. */
function fanOut(levels: number, fan: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let l = 0; l < levels; l++) {
    const properties: Record<string, unknown> = {};
    for (let f = 0; f < fan; f++) properties[`p${f}`] = l + 1 < levels ? { $ref: `#/$defs/d${l + 1}` } : { type: 'string' };
    defs[`d${l}`] = { type: 'object', properties };
  }
  return { $defs: defs, $ref: '#/$defs/d0' };
}

describe('toGeminiSchema', () => {
  it('inlines a recursive $ref once, then stops with a bare object', () => {
    const tree = {
      $defs: { Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/Node' } } } } },
      $ref: '#/$defs/Node',
    };
    expect(toGeminiSchema(tree)).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { type: 'object' } } },
    });
  });

  it('rewrites oneOf, single allOf, examples, definitions refs and drops unsupported formats', () => {
    expect(
      toGeminiSchema({
        definitions: { Id: { type: 'integer', format: 'int64', multipleOf: 2 } },
        type: 'object',
        properties: {
          id: { allOf: [{ $ref: '#/definitions/Id' }], description: 'the id' },
          choice: { oneOf: [{ type: 'string', format: 'uri' }, { type: 'number', format: 'double' }] },
          when: { type: 'string', format: 'date', examples: ['2025-01-01'] },
          anything: true,
        },
        patternProperties: { '^x-': { type: 'string' } },
      }),
    ).toEqual({
      type: 'object',
      properties: {
        id: { type: 'integer', format: 'int64', description: 'the id' },
        choice: { anyOf: [{ type: 'string' }, { type: 'number', format: 'double' }] },
        when: { type: 'string', example: '2025-01-01' },
        anything: {},
      },
    });
  });

  it('reads a type named like an inherited member as any other unknown type (constructor threw a TypeError, a 500)', () => {
    for (const type of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(toGeminiSchema({ type: 'object', properties: { a: { type, format: 'date-time' } } })).toEqual({ type: 'object', properties: { a: { type } } });
    }
  });

  it('keeps only string enums', () => {
    expect(toGeminiSchema({ type: 'integer', enum: [1, 2] })).toEqual({ type: 'integer' });
    expect(toGeminiSchema({ enum: ['a', null] })).toEqual({ type: 'string', enum: ['a'], nullable: true });
  });

  it('refuses a schema whose $refs multiply past MAX_INLINED_NODES, at once (a 2 KB one built half a gigabyte in 28 s)', () => {
    const started = performance.now();
    expect(() => toGeminiSchema(fanOut(8, 8), 'tools[0].function.parameters')).toThrow(
      expect.objectContaining({ category: 'invalid_request', param: 'tools[0].function.parameters', unsent: true }),
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    // A schema that shares its definitions within the bound is still inlined whole.
    const shared = toGeminiSchema(fanOut(4, 4)) as { properties: Record<string, { properties: unknown }> };
    expect(Object.keys(shared.properties.p3!.properties as object)).toHaveLength(4);
  });

  it("counts the nodes inlined across a request's schemas, not each schema's alone", () => {
    // Each schema inlines 6^5 + … ≈ 9,300 nodes, under the bound; eleven of them in one request are over it.
    const budget = schemaBudget();
    let refused = 0;
    for (let t = 0; t < 11; t++) {
      try {
        toGeminiParameters(fanOut(6, 6), `tools[${t}].function.parameters`, budget);
      } catch (err) {
        expect(err).toMatchObject({ category: 'invalid_request', param: `tools[${t}].function.parameters` });
        refused++;
        break;
      }
    }
    expect(refused).toBe(1);
    expect(budget.left).toBeLessThan(0);
    expect(() => toGeminiParameters(fanOut(6, 6))).not.toThrow(); // one alone
    // A real schema's properties, however many, are the body's own: not counted.
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: MAX_INLINED_NODES + 10 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(() => toGeminiParameters(wide)).not.toThrow();
  });

  it('keeps a property named __proto__, and requires only properties it has', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"type":"number"}},"required":["__proto__","a","toString","type"]}');
    expect(JSON.parse(JSON.stringify(toGeminiSchema(schema)))).toEqual(
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"a":{"type":"number"}},"required":["__proto__","a"]}'),
    );
  });

  it('survives hostile depth without blowing the stack', () => {
    let s: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 10_000; i++) s = { type: 'array', items: s };
    expect(() => toGeminiSchema(s)).not.toThrow();
  });
});

describe('toGeminiParameters', () => {
  it('omits parameters for a function without arguments (Gemini rejects an empty OBJECT)', () => {
    expect(toGeminiParameters({ type: 'object', properties: {} })).toBeUndefined();
    expect(toGeminiParameters({ type: 'object' })).toBeUndefined();
    expect(toGeminiParameters(undefined)).toBeUndefined();
    expect(toGeminiParameters({ type: 'object', properties: { a: { type: 'string' } } })).toEqual({ type: 'object', properties: { a: { type: 'string' } } });
  });
});
