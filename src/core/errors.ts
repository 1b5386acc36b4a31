/**
 * Errors the client sees, with a stable `code` (CONTRACT.md's table). Anything
 * thrown inside the gateway that is not a GatewayError becomes a 500 at the
 * server edge, logged without request content.
 */
import type { ErrorBody } from '../protocol/openai.js';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  408: 'timeout_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'service_unavailable_error',
  504: 'timeout_error',
};

export class GatewayError extends Error {
  readonly type: string;
  /**
   * Set when the request was routed before it failed (a 503 after attempts, a 504, an
   * upstream's refusal passed through): the server writes these as the routed
   * response headers an error can carry (attempts made, the gateway's own time).
   */
  routing?: { attempts: number; overheadMs: number };
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    /** Seconds, for 429 and 503. */
    readonly retryAfterS?: number,
    /** What went wrong inside, for logs (never sent to the client). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'GatewayError';
    this.type = TYPE_BY_STATUS[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, code: this.code, param: this.param } };
  }
}

export const invalidRequest = (message: string, param: string | null = null) =>
  new GatewayError(400, 'invalid_request', message, param);
