/**
 * JSON a client sent inside a string — a tool call's `arguments`, a tool result's content —
 * parsed by an adapter whose provider takes it as a value (Anthropic's `input`, Gemini's
 * `args` and `response`, Ollama's `arguments`). The body's own nesting is bounded at the
 * door (MAX_JSON_DEPTH), a string's is not: arguments nested some thousands deep parsed
 * fine and then overflowed the stack when the adapter serialised its request, a 500 from
 * the gateway's own code for the client's input. Held to the body's bound here, such a
 * value is the client's error (`invalid_request`, unsent), naming the field.
 */
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../protocol/json-depth.js';
import { UpstreamError } from '../resilience/upstream-error.js';

/** JSON.parse (its SyntaxError is the caller's to handle), refusing a value nested deeper than a request body may be. */
export function parseClientJson(text: string, param: string): unknown {
  const value: unknown = JSON.parse(text);
  if (value !== null && typeof value === 'object' && nestsDeeperThan(value)) {
    throw new UpstreamError({ category: 'invalid_request', message: `${param} nests deeper than ${MAX_JSON_DEPTH} levels`, param, unsent: true });
  }
  return value;
}
