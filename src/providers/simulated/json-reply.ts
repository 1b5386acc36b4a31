/**
 * The simulated answer to a JSON `response_format`: what a model in JSON mode
 * would write, so a demo client that parses the reply (`JSON.parse`, the SDKs'
 * `parse()` with a schema) works against `npm start` as against a real model.
 * `json_object` wraps the reply text (`{"reply": "…"}`); `json_schema` gets an
 * instance of its schema: every property present (strict mode requires them
 * all), strings holding the reply text, the first of an enum or a union, one
 * item an array (or `minItems`), numbers at their minimum or 1. Local `$ref`s
 * (`#/$defs/…`, `#/definitions/…`) are followed to a bounded depth; what the
 * generator cannot read becomes null.
 */
import type { ResponseFormat } from '../../protocol/openai.js';

type Schema = Record<string, unknown>;

/** Deep enough for any real schema; bounds a recursive `$ref`. */
const MAX_DEPTH = 12;
/**
 * Values a reply may hold in all. Depth alone does not bound it: a `$ref` back to an
 * object of b properties makes b^depth of them, and a 300-byte schema blocked the
 * demo gateway's event loop for seconds. Past the budget, values are null.
 */
const MAX_VALUES = 5_000;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The reply as JSON text for a JSON `response_format`; undefined for text answers. */
export function jsonReply(format: ResponseFormat | null | undefined, text: string): string | undefined {
  if (!isSchema(format)) return undefined;
  if (format.type === 'json_object') return JSON.stringify({ reply: text });
  if (format.type !== 'json_schema') return undefined;
  const schema = format.json_schema?.schema;
  // A schema-less json_schema asks only for JSON.
  if (!isSchema(schema)) return JSON.stringify({ reply: text });
  return JSON.stringify(instance(schema, { root: schema, text, left: MAX_VALUES }, 0) ?? null);
}

/** What every level of one reply shares: the schema's root (for `$ref`), the text, the values left. */
interface Generation {
  root: Schema;
  text: string;
  left: number;
}

function instance(schema: unknown, g: Generation, depth: number): unknown {
  if (!isSchema(schema) || depth > MAX_DEPTH || --g.left < 0) return null;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (typeof schema.$ref === 'string') return instance(resolve(g.root, schema.$ref), g, depth + 1);
  for (const union of [schema.anyOf, schema.oneOf, schema.allOf]) {
    if (Array.isArray(union) && union.length > 0) return instance(union.find((s) => !isNullSchema(s)) ?? union[0], g, depth + 1);
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? 'null') : schema.type;
  switch (type ?? (isSchema(schema.properties) ? 'object' : schema.items !== undefined ? 'array' : 'string')) {
    case 'object': {
      const out: Record<string, unknown> = {};
      if (isSchema(schema.properties)) {
        for (const [name, prop] of Object.entries(schema.properties)) out[name] = instance(prop, g, depth + 1);
      }
      return out;
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' && schema.minItems > 1 ? Math.min(schema.minItems, 16) : 1;
      const max = typeof schema.maxItems === 'number' ? schema.maxItems : min;
      return Array.from({ length: Math.min(min, max) }, () => instance(schema.items, g, depth + 1));
    }
    case 'string':
      return g.text;
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1;
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

function isNullSchema(s: unknown): boolean {
  return isSchema(s) && s.type === 'null';
}

/** A local reference (`#/$defs/Name`, any `#/…` path of plain keys); undefined when it leads nowhere. */
function resolve(root: Schema, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter((s) => s !== '')) {
    if (!isSchema(node)) return undefined;
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = Object.hasOwn(node, key) ? node[key] : undefined;
  }
  return node;
}
