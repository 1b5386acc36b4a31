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

/** Top-level fields are quoted in messages (`'stream' must be…`), paths are not (`stream_options.include_usage must be…`). */
const quoted = (key: string): string => (key.includes('.') || key.includes('[') ? key : `'${key}'`);
