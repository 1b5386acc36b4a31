/**
 * The small checks request validation is built from. Each takes the value read by
 * name at the call site (a read by computed key is a megamorphic lookup, ~150
 * instructions each) and the field's path as OpenAI writes it; `null` is taken as
 * absent, as OpenAI takes it. Nothing is allocated unless a check fails.
 */
import { invalidRequest } from '../core/errors.js';

export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function optNumber(v: unknown, key: string, min: number, max: number, integer = false): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (integer && !Number.isInteger(v))) {
    throw invalidRequest(`${quoted(key)} must be ${integer ? 'an integer' : 'a number'} between ${min} and ${max}`, key);
  }
}

export function optBoolean(v: unknown, key: string): void {
  if (v !== undefined && v !== null && typeof v !== 'boolean') throw invalidRequest(`${quoted(key)} must be a boolean`, key);
}

/** A string; `maxChars` where OpenAI documents a limit. */
export function optString(v: unknown, key: string, maxChars = Infinity): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'string') throw invalidRequest(`${quoted(key)} must be a string`, key);
  if (v.length > maxChars) throw invalidRequest(`${quoted(key)} must be at most ${maxChars} characters`, key);
}

export function optObject(v: unknown, key: string): void {
  if (v !== undefined && v !== null && !isObj(v)) throw invalidRequest(`${quoted(key)} must be an object`, key);
}

/**
 * A function's or a response schema's name, as OpenAI's reference gives it: letters,
 * digits, underscores and dashes, at most 64. Dots too: some of OpenAI's own 400s
 * give the pattern as `^[a-zA-Z0-9_\.-]+$` (o4-mini, 2025), and Gemini takes them; a
 * name an upstream may serve is left for the upstream to judge.
 */
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export const isName = (v: string): boolean => NAME.test(v);

/** The refusal of a name `isName` does not take; `key` is built by the caller only then. */
export const badName = (key: string) => invalidRequest(`${key} must be 1 to 64 letters, digits, underscores, dots or dashes`, key);

/** Top-level fields are quoted in messages (`'stream' must be…`), paths are not (`stream_options.include_usage must be…`). */
const quoted = (key: string): string => (key.includes('.') || key.includes('[') ? key : `'${key}'`);
