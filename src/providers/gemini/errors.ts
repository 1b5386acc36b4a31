/**
 * Gemini failures → UpstreamError. The shared `errorFromResponse` reads the
 * message and code; this file corrects what the generic table cannot know from
 * Gemini's bodies, judging by the google.rpc `status` first:
 *
 * - RESOURCE_EXHAUSTED → rate_limited, with `retryAfterMs` from the RetryInfo
 *   detail (`"retryDelay": "30s"`) when no Retry-After header came (Gemini
 *   sends none).
 * - UNAVAILABLE → overloaded when the message says so ("The model is
 *   overloaded"), else server.
 * - INVALID_ARGUMENT → context_length for "The input token count (N) exceeds
 *   the maximum…"; auth for a bad key (Gemini answers 400 API_KEY_INVALID, not
 *   401, which the generic table calls invalid_request); otherwise
 *   invalid_request — even when the message names `safety_settings`, which the
 *   generic table would call content_policy.
 * - FAILED_PRECONDITION → auth: "User location is not supported" or a free
 *   tier unavailable in the region is this deployment's problem, not the
 *   request's, so another candidate should serve.
 * - PERMISSION_DENIED / UNAUTHENTICATED → auth; NOT_FOUND → not_found (a model
 *   name Gemini does not serve: the deployment's fault, so another candidate
 *   should serve), except when it says the model does not embed (the request's
 *   operation, read as the generic table reads it); DEADLINE_EXCEEDED → timeout;
 *   INTERNAL → server.
 */
import { errorFromResponse, parseErrorBody } from '../../resilience/classify.js';
import { UpstreamError, type ErrorCategory } from '../../resilience/upstream-error.js';
import type { UpstreamHeaders } from '../types.js';
import type { GeminiErrorBody } from './wire.js';
import { geminiInputLimitOf } from './input-limit.js';

const API_KEY_RE = /api[_ ]?key (?:not valid|invalid|expired)|API_KEY_INVALID/i;

/** The `error` object of a Gemini body (also when wrapped in an array), or undefined. */
function errorObject(body: unknown): GeminiErrorBody['error'] | undefined {
  const b = Array.isArray(body) ? body[0] : body;
  if (!b || typeof b !== 'object') return undefined;
  const e = (b as { error?: unknown }).error;
  return e && typeof e === 'object' && !Array.isArray(e) ? (e as GeminiErrorBody['error']) : undefined;
}

/** google.protobuf.Duration in JSON ("30s", "1.5s") → milliseconds. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return m ? Math.round(Number(m[1]) * 1000) : undefined;
}

function details(e: GeminiErrorBody['error']): NonNullable<GeminiErrorBody['error']['details']> {
  return Array.isArray(e.details) ? e.details.filter((d) => d && typeof d === 'object') : [];
}

function retryDelayMs(e: GeminiErrorBody['error']): number | undefined {
  for (const d of details(e)) {
    if (typeof d['@type'] === 'string' && d['@type'].endsWith('google.rpc.RetryInfo')) return parseDuration(d.retryDelay);
  }
  return undefined;
}

function category(status: string | undefined, message: string, e: GeminiErrorBody['error'], fallback: ErrorCategory): ErrorCategory {
  switch (status) {
    case 'RESOURCE_EXHAUSTED':
      return 'rate_limited';
    case 'UNAVAILABLE':
      return /overloaded/i.test(message) ? 'overloaded' : 'server';
    case 'INVALID_ARGUMENT': {
      if (fallback === 'context_length') return fallback;
      const keyInvalid = API_KEY_RE.test(message) || details(e).some((d) => d.reason === 'API_KEY_INVALID');
      return keyInvalid ? 'auth' : 'invalid_request';
    }
    case 'FAILED_PRECONDITION':
    case 'PERMISSION_DENIED':
    case 'UNAUTHENTICATED':
      return 'auth';
    case 'NOT_FOUND':
      // "… or is not supported for batchEmbedContents": embeddings asked of a chat model (classify.ts).
      return fallback === 'invalid_request' ? fallback : 'not_found';
    case 'DEADLINE_EXCEEDED':
      return 'timeout';
    case 'INTERNAL':
      return 'server';
    default:
      return fallback;
  }
}

/** A non-2xx Gemini response → normalized error. */
export function geminiErrorFromResponse(status: number, bodyText: string, headers: UpstreamHeaders, now: number): UpstreamError {
  const base = errorFromResponse(status, bodyText, headers, now);
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return base;
  }
  const e = errorObject(body);
  if (!e) return base;
  const rpcStatus = typeof e.status === 'string' ? e.status : undefined;
  const cat = category(rpcStatus, base.message, e, base.category);
  return new UpstreamError({
    category: cat,
    status,
    message: base.message,
    providerCode: base.providerCode,
    retryAfterMs: base.retryAfterMs ?? retryDelayMs(e),
    headers,
    param: base.param,
    // A prompt plainly larger than the quota is refused for its size (refused-for-size.ts).
    inputTokenLimit: cat === 'rate_limited' ? geminiInputLimitOf(e, base.message) : undefined,
  });
}

/**
 * An `{"error": ...}` event inside a 200 stream (Gemini's way of failing after
 * the status line), or a 200 answer that is one. Its `code` stands in for the
 * HTTP status; undefined when `data` holds no error object. `headers`: the 200's, which
 * teach the pacer as any answer's do.
 */
export function geminiStreamError(data: string, now: number, headers?: UpstreamHeaders): UpstreamError | undefined {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    return undefined;
  }
  const e = errorObject(body);
  if (!e) return undefined;
  const code = typeof e.code === 'number' && e.code >= 400 && e.code < 600 ? e.code : 500;
  const err = geminiErrorFromResponse(code, data, {}, now);
  // The status line said 200; keep the code only as the provider's word.
  return new UpstreamError({
    category: err.category,
    message: err.message,
    providerCode: err.providerCode ?? parseErrorBody(data).code,
    retryAfterMs: err.retryAfterMs,
    headers,
  });
}

/** A request this adapter cannot express in Gemini's format: the client's fault, not the deployment's. */
export function invalidRequest(message: string, param: string | null = null): UpstreamError {
  return new UpstreamError({ category: 'invalid_request', message, param, unsent: true });
}
