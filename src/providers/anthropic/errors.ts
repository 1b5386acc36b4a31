/**
 * Anthropic failures → UpstreamError. The shared table in classify.ts does the
 * work; this file corrects the cases where Anthropic's own error `type` is more
 * reliable than a guess from the message text, and classifies in-stream
 * `error` events, which arrive on a 200 response and so carry no status.
 */
import { categorize, errorFromResponse, parseErrorBody } from '../../resilience/classify.js';
import { UpstreamError, type ErrorCategory } from '../../resilience/upstream-error.js';
import type { UpstreamHeaders } from '../types.js';
import { amended, recategorized } from '../recategorized.js';
import { inputLimitOf } from './input-limit.js';

/** The HTTP status each documented Anthropic error type is sent with. */
const STATUS_OF_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/**
 * Where the error type decides, whatever the message says:
 * - `request_too_large` (413: body over 32 MB) says "exceeds the maximum",
 *   which the shared table reads as a context-length error; it is a bad request.
 * - A billing problem (`billing_error`, or the 400 "credit balance is too low")
 *   leaves this deployment unusable until someone pays: like bad credentials,
 *   so other candidates are tried and this one is not blamed on the request.
 */
function override(status: number | undefined, type: string | undefined, message: string): ErrorCategory | undefined {
  if (type === 'request_too_large' || status === 413) return 'invalid_request';
  if (type === 'billing_error' || status === 402 || /credit balance is too low/i.test(message)) return 'auth';
  return undefined;
}

export function anthropicErrorFromResponse(
  status: number,
  bodyText: string,
  headers: UpstreamHeaders,
  now: number,
): UpstreamError {
  const err = errorFromResponse(status, bodyText, headers, now);
  const category = override(status, err.providerCode, err.message);
  // errorFromResponse keeps `status` and `headers` as given.
  if (category !== undefined && category !== err.category) return recategorized(err, category);
  // A 429 names the input-tokens-per-minute limit: a prompt plainly larger is refused for its size (refused-for-size.ts).
  const inputTokenLimit = err.category === 'rate_limited' ? inputLimitOf(headers, err.message) : undefined;
  return inputTokenLimit === undefined ? err : amended(err, { inputTokenLimit });
}

/**
 * An `event: error` in a stream, e.g. `{"type":"error","error":{"type":"overloaded_error",...}}`:
 * classified as the status Anthropic would have sent outside a stream. `headers`: the stream's
 * 200, whose rate-limit headers teach the pacer as any answer's do.
 */
export function anthropicStreamError(data: string, headers?: UpstreamHeaders): UpstreamError {
  const parsed = parseErrorBody(data);
  const type = parsed.code;
  const status = (type !== undefined ? STATUS_OF_TYPE[type] : undefined) ?? 500;
  const category = override(undefined, type, parsed.message) ?? categorize(status, `${type ?? ''} ${parsed.message}`);
  return new UpstreamError({
    category,
    message: parsed.message || 'anthropic stream reported an error',
    providerCode: type,
    headers,
  });
}
