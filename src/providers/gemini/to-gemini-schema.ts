/**
 * JSON Schema (as OpenAI clients write it: zod/pydantic output, `strict` mode)
 * → the OpenAPI 3.0 subset Gemini accepts in `parameters` and `responseSchema`.
 *
 * Gemini answers 400 "Unknown name ... Cannot find field" for any key outside
 * its Schema message, so this is an allow-list, not a deny-list. Dropped:
 * `$schema`, `$id`, `$comment`, `additionalProperties`, `strict`, `examples`
 * (the first becomes `example`), `exclusiveMinimum`/`exclusiveMaximum`,
 * `multipleOf`, `uniqueItems`, `not`, `if`/`then`/`else`, `patternProperties`,
 * `unevaluatedProperties`, `readOnly`/`writeOnly`/`deprecated`, and any other
 * key Gemini does not know. Rewritten: local `$ref`s into `$defs`/`definitions`
 * are inlined (a recursive one becomes a bare object), `oneOf` → `anyOf`,
 * a single-member `allOf` is merged, `const` → one-value `enum`, a type list or
 * a `null` member of `anyOf`/`enum` → `nullable: true`, and `format` is kept
 * only where Gemini accepts it (string: enum, date-time; number: float, double;
 * integer: int32, int64). Empty `properties` maps are omitted because Gemini
 * rejects an OBJECT with an empty one.
 */
import { invalidRequest } from './errors.js';

type Json = Record<string, unknown>;

const COPIED = [
  'title',
  'description',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'example',
  'default',
  'propertyOrdering',
] as const;

/** A Map, not an object: the type is the client's, and `constructor` or `toString` found Object's own (a TypeError, a 500). */
const FORMATS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['string', new Set(['enum', 'date-time'])],
  ['number', new Set(['float', 'double'])],
  ['integer', new Set(['int32', 'int64'])],
]);

/** Recursion guard for pathological (or hostile) schemas. */
const MAX_DEPTH = 32;

/**
 * Schema nodes one request's conversions may build by inlining `$ref`s. Depth alone does not
 * bound them: inlining multiplies, and a definition whose b properties each refer to the next
 * makes b^depth nodes — a 2 KB tool schema (8 definitions of 8 properties) held the event loop
 * for 28 s building half a gigabyte, and one more level ran the gateway out of memory. Counted
 * per request, not per schema: a body of many such tools, each under a per-schema bound, would
 * multiply it again. Nodes outside a `$ref` are the body's own (bounded by its size) and are
 * not counted. Far above any real request's; past it the request is refused as one Gemini
 * cannot take (`invalid_request`, unsent), so a candidate that takes `$ref`s as sent may still
 * serve it.
 */
export const MAX_INLINED_NODES = 100_000;

/** What one request's schema conversions share: the inlined nodes they may still build. */
export interface SchemaBudget {
  left: number;
}

export const schemaBudget = (): SchemaBudget => ({ left: MAX_INLINED_NODES });

/** What every level of one conversion shares: the root (for `$ref`), the request's budget, the field named when it runs out. */
interface Conversion {
  root: Json;
  budget: SchemaBudget;
  param: string | null;
}

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Convert a whole schema; `undefined` when nothing of it survives. `param` names the request
 * field it came from, in the refusal of one that spends `budget` (the request's: see
 * MAX_INLINED_NODES).
 */
export function toGeminiSchema(schema: unknown, param: string | null = null, budget: SchemaBudget = schemaBudget()): Json | undefined {
  if (!isObj(schema)) return undefined;
  return convert(schema, { root: schema, budget, param }, [], 0);
}

/**
 * Function parameters: as `toGeminiSchema`, but an object without properties
 * becomes no `parameters` at all, since Gemini rejects an empty OBJECT there.
 */
export function toGeminiParameters(schema: unknown, param: string | null = null, budget: SchemaBudget = schemaBudget()): Json | undefined {
  const out = toGeminiSchema(schema, param, budget);
  if (!out) return undefined;
  if ((out.type === 'object' || out.type === undefined) && !isObj(out.properties) && !Array.isArray(out.anyOf)) return undefined;
  return out;
}

function resolveRef(root: Json, ref: string): Json | undefined {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) return undefined;
  const defs = root[m[1]!];
  if (!isObj(defs)) return undefined;
  const name = m[2]!.replace(/~1/g, '/').replace(/~0/g, '~');
  const def = defs[name];
  return isObj(def) ? def : undefined;
}

function convert(s: Json, g: Conversion, refs: string[], depth: number): Json {
  if (depth > MAX_DEPTH) return { type: 'object' };
  // Inside an inlined `$ref` (refs names it): a copy, which is what multiplies.
  if (refs.length > 0 && --g.budget.left < 0) {
    throw invalidRequest(`the request's JSON schemas expand past ${MAX_INLINED_NODES} nodes once their $refs are inlined, more than Gemini can be sent`, g.param);
  }

  if (typeof s.$ref === 'string') {
    const target = refs.includes(s.$ref) ? undefined : resolveRef(g.root, s.$ref);
    // Siblings of $ref (a description, usually) win over the target's.
    if (!target) return withDescription({ type: 'object' }, s);
    const { $ref: _ref, ...siblings } = s;
    return convert({ ...target, ...siblings }, g, [...refs, s.$ref], depth + 1);
  }

  if (Array.isArray(s.allOf) && s.allOf.length === 1 && isObj(s.allOf[0])) {
    const { allOf: _allOf, ...rest } = s;
    return convert({ ...s.allOf[0], ...rest }, g, refs, depth + 1);
  }

  const out: Json = {};
  let nullable = s.nullable === true;

  // type: a string, or a list whose `null` member means nullable.
  let type: string | undefined;
  if (typeof s.type === 'string') type = s.type;
  else if (Array.isArray(s.type)) {
    const types = s.type.filter((t): t is string => typeof t === 'string');
    if (types.includes('null')) nullable = true;
    type = types.find((t) => t !== 'null');
  }
  if (type === 'null') {
    nullable = true;
    type = undefined;
  }

  // anyOf / oneOf: drop the `null` branch; one survivor is merged into this node.
  const union = Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined;
  if (union) {
    const branches: Json[] = [];
    for (const b of union) {
      if (!isObj(b)) continue;
      if (b.type === 'null') {
        nullable = true;
        continue;
      }
      branches.push(convert(b, g, refs, depth + 1));
    }
    if (branches.length === 1) {
      Object.assign(out, branches[0]);
      if (out.nullable === true) nullable = true;
    } else if (branches.length > 1) out.anyOf = branches;
  }

  if (type !== undefined) out.type = type;
  for (const key of COPIED) if (s[key] !== undefined) out[key] = s[key];
  if (out.example === undefined && Array.isArray(s.examples) && s.examples.length > 0) out.example = s.examples[0];

  if (typeof s.format === 'string' && type !== undefined && FORMATS.get(type)?.has(s.format)) out.format = s.format;

  const values = Array.isArray(s.enum) ? s.enum : s.const !== undefined ? [s.const] : undefined;
  if (values) {
    if (values.includes(null)) nullable = true;
    const strings = values.filter((v) => v !== null);
    if (strings.length > 0 && strings.every((v): v is string => typeof v === 'string')) {
      out.enum = strings;
      if (out.type === undefined) out.type = 'string';
    }
  }

  if (isObj(s.properties)) {
    // No prototype: a property named `__proto__` (JSON.parse makes it an own key) is kept as one,
    // where assigning it to `{}` set the map's prototype instead, and `required` then kept it and
    // inherited names (`toString`, `type`) that no property has, which Gemini refuses.
    const props: Json = Object.create(null) as Json;
    for (const [name, sub] of Object.entries(s.properties)) {
      if (isObj(sub)) props[name] = convert(sub, g, refs, depth + 1);
      else if (sub === true) props[name] = {};
    }
    if (Object.keys(props).length > 0) {
      out.properties = props;
      if (Array.isArray(s.required)) {
        const required = s.required.filter((r): r is string => typeof r === 'string' && Object.hasOwn(props, r));
        if (required.length > 0) out.required = required;
      }
    }
  }

  if (isObj(s.items)) out.items = convert(s.items, g, refs, depth + 1);
  else if (Array.isArray(s.items) && isObj(s.items[0])) out.items = convert(s.items[0], g, refs, depth + 1);

  if (nullable) out.nullable = true;
  return out;
}

function withDescription(out: Json, s: Json): Json {
  if (typeof s.description === 'string') out.description = s.description;
  return out;
}
