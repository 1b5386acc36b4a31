/**
 * The one normalized upstream failure. Every adapter turns whatever its provider
 * does wrong (a status, an error body, a reset socket, a cut stream) into an
 * UpstreamError with a category; the executor decides what to do from the
 * category alone, so an Anthropic 529, a Gemini RESOURCE_EXHAUSTED and an
 * OpenAI 429 are treated alike.
 */
import { plausibleRetryAfterMs } from '../protocol/retry-after.js';

export type ErrorCategory =
  | 'rate_limited' // 429, RESOURCE_EXHAUSTED
  | 'overloaded' // 529 and "overloaded" bodies
  | 'server' // any other 5xx
  | 'timeout' // no answer within the attempt's budget (also: TTFT / stall)
  | 'network' // reset, refused, DNS, TLS, a stream cut before its end
  | 'auth' // upstream 401/403: this deployment is misconfigured
  | 'not_found' // 404: the deployment's model (or route) does not exist upstream
  | 'invalid_request' // 400, 413, 422: the request itself is wrong
  | 'context_length' // prompt too long for this model
  | 'content_policy'; // the provider refused the content

export interface UpstreamErrorInit {
  category: ErrorCategory;
  message: string;
  status?: number;
  /**
   * The HTTP status an error sent inside a 200 stands for (an error object or event naming
   * 413 or 422): the client's answer keeps it, while `status`, the attempt's, stays unset.
   */
  meantStatus?: number;
  /** Provider's own error code or type, e.g. `overloaded_error`, `RESOURCE_EXHAUSTED`. */
  providerCode?: string;
  /** Parsed from Retry-After / retry-after-ms / provider bodies; milliseconds. */
  retryAfterMs?: number;
  headers?: Record<string, string | string[] | undefined>;
  /** The upstream's `param` for invalid requests, passed through to the client. */
  param?: string | null;
  /**
   * Raised by an adapter before anything was sent: it cannot express the request for
   * its provider. The executor passes such a candidate over (see executor.ts).
   */
  unsent?: boolean;
  /**
   * The deployment's limit of input tokens (a minute's, or a quota's) that a rate limit's answer
   * names, or that a refusal for size was made against: a prompt plainly larger than it can never
   * be served there (providers/refused-for-size.ts).
   */
  inputTokenLimit?: number;
  cause?: unknown;
}

export class UpstreamError extends Error {
  readonly category: ErrorCategory;
  readonly status: number | undefined;
  readonly meantStatus: number | undefined;
  readonly providerCode: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly headers: Record<string, string | string[] | undefined> | undefined;
  readonly param: string | null | undefined;
  readonly unsent: boolean;
  readonly inputTokenLimit: number | undefined;
  /**
   * Set where the error alone cannot say: a batched request (embedding-batches.ts) whose
   * failing call never connected, after another of its calls was answered. Unset, the executor
   * judges from the category and code whether the attempt reached the upstream.
   */
  reachedUpstream: boolean | undefined;

  constructor(init: UpstreamErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'UpstreamError';
    this.category = init.category;
    this.status = init.status;
    this.meantStatus = init.meantStatus;
    this.providerCode = providerCodeOf(init.providerCode);
    // Whoever parsed it (a header, Gemini's RetryInfo in a body): a wait past a day is none.
    this.retryAfterMs = plausibleRetryAfterMs(init.retryAfterMs);
    this.headers = init.headers;
    this.param = init.param;
    this.unsent = init.unsent === true;
    this.inputTokenLimit = init.inputTokenLimit !== undefined && Number.isSafeInteger(init.inputTokenLimit) && init.inputTokenLimit > 0 ? init.inputTokenLimit : undefined;
    this.reachedUpstream = undefined;
  }

  /** Short label for traces and error messages: `429 rate_limited`, `network`. */
  get label(): string {
    return this.status ? `${this.status} ${this.category}` : this.category;
  }
}

/**
 * A provider's code is an identifier (`rate_limit_exceeded`, `RESOURCE_EXHAUSTED`, `ECONNRESET`);
 * anything else an error body put in its place is not kept. The code goes into the trace,
 * which keeps no upstream text: a megabyte `code` was held by every trace (10,000 of them
 * by default), and one that echoed the request would have put content there.
 */
const CODE = /^[\w.:-]{1,64}$/;
const providerCodeOf = (code: string | undefined): string | undefined => (code !== undefined && CODE.test(code) ? code : undefined);

export function isUpstreamError(err: unknown): err is UpstreamError {
  return err instanceof UpstreamError;
}
