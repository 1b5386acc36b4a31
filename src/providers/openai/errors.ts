/**
 * OpenAI-format failures that arrive with a 200: an `{"error": {...}}` event in a
 * stream (OpenAI, Azure, vLLM and a LiteLLM proxy all send one when a request fails
 * after the status line is out), or a buffered answer that is one. Classified as the
 * HTTP error they stand for, as the Anthropic and Gemini adapters do with their own
 * error events: the status the error's `code` or `type` is sent with outside a
 * stream, then the shared table. Read as `server` whatever they said, a rate limit
 * was retried instead of cooled down, a context-length refusal was retried instead
 * of handed to a larger model, and a bad request was retried and answered elsewhere.
 *
 * The shapes seen: OpenAI `{"error":{"message","type","param","code":"rate_limit_exceeded"}}`,
 * vLLM `{"error":{"message","type":"BadRequestError","param","code":400}}`, a LiteLLM
 * proxy `{"error":{"message","type","param","code":"429"}}` (its status as a string),
 * Azure `{"error":{"code":"429" | "content_filter","message",...}}`.
 */
import { categorize, categorizeWithoutStatus, hintedWait } from '../../resilience/classify.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { UpstreamHeaders } from '../types.js';

/** The HTTP status each error code or type is sent with outside a stream. */
const STATUS_OF: ReadonlyMap<string, number> = new Map(
  Object.entries({
    // OpenAI's codes and types (and Azure's)
    invalid_request_error: 400,
    context_length_exceeded: 400,
    string_above_max_length: 400,
    content_filter: 400,
    content_policy_violation: 400,
    invalid_api_key: 401,
    authentication_error: 401,
    permission_error: 403,
    model_not_found: 404,
    not_found_error: 404,
    rate_limit_exceeded: 429,
    rate_limit_error: 429,
    insufficient_quota: 429,
    server_error: 500,
    api_error: 500,
    // vLLM's and LiteLLM's types
    BadRequestError: 400,
    AuthenticationError: 401,
    PermissionDeniedError: 403,
    NotFoundError: 404,
    RateLimitError: 429,
    throttling_error: 429,
    InternalServerError: 500,
    internal_server_error: 500,
  }),
);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** A status-like number (400 or 429, also as the string "429"), else undefined. */
function statusLike(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{3}$/.test(v) ? Number(v) : NaN;
  return n >= 400 && n < 600 ? n : undefined;
}

/**
 * The classified error of a body or event whose `error` member is set (`body` as parsed;
 * an array holding one, as some servers wrap it, is looked into), or undefined when it has
 * none. `headers`: the 200's, so the pacer learns what they said as from any answer.
 */
export function openAIErrorOf(body: unknown, headers: UpstreamHeaders): UpstreamError | undefined {
  const b: unknown = Array.isArray(body) ? body[0] : body;
  if (b === null || typeof b !== 'object') return undefined;
  const e: unknown = (b as { error?: unknown }).error;
  if (e === undefined) return undefined;
  const eo = (e !== null && typeof e === 'object' ? e : { message: e }) as Record<string, unknown>;
  const code = str(eo.code);
  const type = str(eo.type);
  const message = str(eo.message) ?? 'upstream reported an error';
  const named = statusLike(eo.code) ?? statusLike(eo.status);
  const status = named ?? (code !== undefined ? STATUS_OF.get(code) : undefined) ?? (type !== undefined ? STATUS_OF.get(type) : undefined);
  const text = `${code ?? ''} ${type ?? ''} ${message}`;
  const category = status !== undefined ? categorize(status, text) : categorizeWithoutStatus(text);
  const err = new UpstreamError({
    category,
    message,
    retryAfterMs: hintedWait(category, message),
    // A status the error names itself (LiteLLM's "413", vLLM's 422) is what the client is answered.
    meantStatus: named,
    providerCode: code ?? type ?? (typeof eo.code === 'number' ? String(eo.code) : undefined),
    headers,
    param: str(eo.param) ?? null,
  });
  // It came as an answer: the upstream counted the request (the lease is settled, not given back).
  err.reachedUpstream = true;
  return err;
}
