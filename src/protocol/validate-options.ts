/**
 * A chat request's options (what it asks of the answer, beside its messages and
 * tools): the shape the gateway and its adapters rely on.
 */
import { invalidRequest } from '../core/errors.js';
import { isObj, optBoolean, optNumber } from './field-checks.js';

export function checkChatOptions(body: Record<string, unknown>): void {
  optBoolean(body.stream, 'stream');
  if (body.stream_options !== undefined && body.stream_options !== null && !isObj(body.stream_options)) {
    throw invalidRequest("'stream_options' must be an object", 'stream_options');
  }
  optNumber(body.max_tokens, 'max_tokens', 1, 10_000_000, true);
  optNumber(body.max_completion_tokens, 'max_completion_tokens', 1, 10_000_000, true);
  optNumber(body.temperature, 'temperature', 0, 2);
  optNumber(body.top_p, 'top_p', 0, 1);
  optNumber(body.n, 'n', 1, 128, true);
  optNumber(body.presence_penalty, 'presence_penalty', -2, 2);
  optNumber(body.frequency_penalty, 'frequency_penalty', -2, 2);
  optNumber(body.seed, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);
  checkStop(body.stop);
  if (body.response_format !== undefined && body.response_format !== null && !(isObj(body.response_format) && typeof body.response_format.type === 'string')) {
    throw invalidRequest("'response_format' must be an object with a 'type'", 'response_format');
  }
}

/** `stop`: a string or an array of strings (adapters map each to the provider's stop sequences). */
function checkStop(stop: unknown): void {
  if (stop === undefined || stop === null || typeof stop === 'string') return;
  if (Array.isArray(stop) && stop.every(isString)) return;
  throw invalidRequest("'stop' must be a string or an array of strings", 'stop');
}

const isString = (v: unknown): boolean => typeof v === 'string';
