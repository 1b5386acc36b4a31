/**
 * The error bodies the simulated upstream answers with, in OpenAI's shape, so
 * the shared classifier sees exactly what a real upstream would send.
 */
import type { ErrorBody } from '../../protocol/openai.js';

const RATE_LIMIT_MESSAGE = 'Rate limit reached for requests (simulated). Please try again later.';

export function rateLimitBody(): ErrorBody {
  return { error: { message: RATE_LIMIT_MESSAGE, type: 'requests', param: null, code: 'rate_limit_exceeded' } };
}

/** A plausible OpenAI-style body for `status`; `message` replaces the default text. */
export function statusBody(status: number, message?: string): ErrorBody {
  if (status === 429 && message === undefined) return rateLimitBody();
  const [type, code, text] = DEFAULTS[status] ?? fallback(status);
  return { error: { message: message ?? text, type, param: null, code } };
}

type Entry = [type: string, code: string | null, message: string];

const DEFAULTS: Record<number, Entry> = {
  400: ['invalid_request_error', null, 'Invalid request (simulated).'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided (simulated).'],
  403: ['invalid_request_error', 'unsupported_country_region_territory', 'Request not allowed (simulated).'],
  404: ['invalid_request_error', 'model_not_found', 'The model does not exist (simulated).'],
  408: ['timeout', null, 'Request timed out (simulated).'],
  429: ['requests', 'rate_limit_exceeded', RATE_LIMIT_MESSAGE],
  500: ['server_error', null, 'The server had an error while processing your request (simulated).'],
  502: ['server_error', null, 'Bad gateway (simulated).'],
  503: ['server_error', null, 'Service unavailable (simulated).'],
  504: ['server_error', null, 'Gateway timeout (simulated).'],
  529: ['overloaded_error', 'overloaded_error', 'Overloaded (simulated).'],
};

function fallback(status: number): Entry {
  return status >= 500
    ? ['server_error', null, `Upstream error ${status} (simulated).`]
    : ['invalid_request_error', null, `Request failed with status ${status} (simulated).`];
}
