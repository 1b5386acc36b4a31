/**
 * Pure classification of upstream failures into the normalized categories.
 * Adapters call `errorFromResponse` with whatever the provider sent; provider
 * specifics (Gemini's RESOURCE_EXHAUSTED, Anthropic's overloaded_error) are
 * recognised here from the body so every adapter shares one table.
 */
import { UpstreamError, type ErrorCategory } from './upstream-error.js';
import type { UpstreamHeaders } from '../providers/types.js';
import { parseRetryAfter, retryHintMs } from '../protocol/retry-after.js';
import { exhaustedWaitMs } from '../limits/rate-limit-headers.js';

export { parseRetryAfter };

const CONTEXT_RE =
  /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long|exceeds the (?:maximum|model)|max_tokens.*(?:exceed|too large)|reduce the length|token limit/i;
// `\bsafety\b` so a bad `safety_settings` value is not read as a refusal.
const POLICY_RE = /content[_ ]policy|content[_ ]filter|\bsafety\b|responsible ?ai|flagged|moderation/i;
// Credentials or account state that make this deployment unusable, whatever the status (Gemini answers a bad key with 400).
const AUTH_RE = /api[_ ]?key not valid|API_KEY_INVALID|invalid[_ ]api[_ ]key|incorrect api key|FAILED_PRECONDITION|location is not supported|billing|credit balance/i;
const OVERLOADED_RE = /overloaded/i;
const RATE_RE = /rate[_ ]limit|resource[_ ]exhausted|quota|too many requests/i;
// A model retired upstream, answered with a 400 rather than a 404 (Groq's `model_decommissioned`, Gemini's
// "This model models/… is no longer available to new users"): the deployment is gone for every request.
// "model" must come first, so a parameter that is "no longer supported" is not read as the model's end.
const RETIRED_RE = /model_decommissioned|\bmodel\b.{0,100}?\b(?:is no longer available|has been (?:decommissioned|retired|deprecated))/i;
// A model asked for an operation it does not do: OpenAI answers embeddings on a chat model with
// 403 "You are not allowed to generate embeddings from this model", Azure with 400
// OperationNotSupported "The embeddings operation does not work with the specified model", Gemini
// with 404 NOT_FOUND "models/… is not found for API version v1beta, or is not supported for
// batchEmbedContents", Ollama with a 500 "this model does not support embeddings" (its runner's
// error). Said of this request's endpoint, not of the credentials or the deployment: read as auth,
// a missing model or a server fault, one embeddings request sent through chat deployments (auto's
// tiers, or a chat alias) cooled every one of them down, or opened their breakers, for chat
// traffic too. Gemini's chat twin ("… not supported for generateContent") stays not_found: it is
// how Gemini names a model that is gone, the usual reason for it.
const WRONG_OPERATION_RE =
  /not allowed to generate embeddings from this model|operation does not work with the specified model|not supported for (?:batchE|e)mbedContents?\b|\bdoes not support embeddings\b/i;

// One request larger than the deployment's whole tokens-per-minute limit: OpenAI's 429 "Request too large
// for gpt-4o in organization org-… on tokens per min (TPM): Limit 30000, Requested 36278", Groq's 413 "…
// on tokens per minute (TPM): Limit 6000, Requested 7964". Not a rate limit: waiting never lets it through
// here, while a deployment with a larger limit may take it (see refusedByThisModel).
const TOO_LARGE_RE = /request too large for .{0,300}?(?:tokens per min|\(TPM\))/i;
// The same said only by numbers: a limit and a request above it, nothing used in between.
const LIMIT_REQUESTED_RE = /\bLimit:? (\d+), Requested:? (\d+)\b/i;

/** The request alone exceeds this deployment's token-per-minute limit (read from the upstream's text). */
export function exceedsTokenLimit(text: string): boolean {
  if (TOO_LARGE_RE.test(text)) return true;
  const m = LIMIT_REQUESTED_RE.exec(text);
  return m !== null && Number(m[2]) > Number(m[1]);
}

export function header(headers: UpstreamHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Category from an HTTP status and the error text; ranges, never enumerated lists. */
export function categorize(status: number, text: string): ErrorCategory {
  // Refused for its size, not its timing: a refusal by this deployment alone (no cooldown, no breaker).
  if ((status === 429 || status === 413) && exceedsTokenLimit(text)) return 'invalid_request';
  if (status === 429) return OVERLOADED_RE.test(text) && !RATE_RE.test(text) ? 'overloaded' : 'rate_limited';
  if (status === 529) return 'overloaded';
  // Whatever the status (403, 404, 500): the request's operation, not the deployment, was refused.
  if (status >= 400 && WRONG_OPERATION_RE.test(text)) return 'invalid_request';
  if (status === 504) return 'timeout';
  if (status >= 500) {
    if (OVERLOADED_RE.test(text)) return 'overloaded';
    return 'server';
  }
  if (status === 401 || status === 403) {
    // Some providers answer 403 for a policy block; most mean bad credentials.
    return POLICY_RE.test(text) && !/api[_ ]?key|credential|permission|auth/i.test(text) ? 'content_policy' : 'auth';
  }
  if (status === 408) return 'timeout';
  // Payment required / billing: this deployment cannot serve until someone pays. 451: not served
  // in this region (as "location is not supported" below): asking again would be answered the same.
  if (status === 402 || status === 451) return 'auth';
  if (status === 413) return 'invalid_request';
  // A model not pulled, a typo in a deployment's model, a deleted Azure deployment, a wrong baseUrl:
  // whatever the body says, the deployment names something the upstream does not have. So does a
  // 405 (a baseUrl whose path takes no POST: a web page, a path without /v1) and a 410 (a retired model).
  if (status === 404 || status === 405 || status === 410) return 'not_found';
  if (status >= 400 && status < 500 && AUTH_RE.test(text)) return 'auth';
  if (status === 400 && RETIRED_RE.test(text)) return 'not_found';
  if (status >= 400) {
    if (CONTEXT_RE.test(text)) return 'context_length';
    if (POLICY_RE.test(text)) return 'content_policy';
    if (RATE_RE.test(text) && /quota|exhausted/i.test(text)) return 'rate_limited';
    // Only these say the client's request is at fault (its body: 400, 409, 413, 422). The others are
    // about the route, whose method, path, headers and framing are the gateway's own choice: 406, 411,
    // 414, 415, 421, 426, 431, and vendors' own codes such as Groq's 498 (flex tier capacity exceeded),
    // the 499 of a server behind nginx that cancelled it, 420 (slow down). Read as invalid_request,
    // they ended the chain with a status outside the contract while another candidate could answer.
    return status === 400 || status === 409 || status === 422 ? 'invalid_request' : 'server';
  }
  return 'server';
}

/**
 * Category of an error that came without a status of its own (an error event in a 200 stream
 * that names no code either): what its text says, as `categorize` reads it, else `server`.
 * Never `invalid_request`: that ends the chain, and nothing here says the request was at fault.
 */
export function categorizeWithoutStatus(text: string): ErrorCategory {
  if (RATE_RE.test(text)) return 'rate_limited';
  const asClientError = categorize(400, text);
  return asClientError === 'invalid_request' ? categorize(500, text) : asClientError;
}

interface ParsedErrorBody {
  message: string;
  code?: string;
  param?: string | null;
}

/**
 * Pull a message and code out of the error bodies providers actually send:
 * OpenAI `{error:{message,type,code,param}}`, Anthropic `{type:'error',error:{type,message}}`,
 * Gemini `{error:{code,message,status}}`, Cohere `{message}`, Ollama `{error:"..."}`.
 */
export function parseErrorBody(text: string): ParsedErrorBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { message: text.slice(0, 500) };
  }
  // Gemini wraps errors in an array when streaming.
  if (Array.isArray(body)) body = body[0];
  if (!body || typeof body !== 'object') return { message: text.slice(0, 500) };
  const b = body as Record<string, unknown>;
  const e = b.error;
  if (typeof e === 'string') return { message: e };
  if (e && typeof e === 'object') {
    const eo = e as Record<string, unknown>;
    const code = [eo.status, eo.code, eo.type].find((x) => typeof x === 'string') as string | undefined;
    return {
      message: typeof eo.message === 'string' ? eo.message : text.slice(0, 500),
      code,
      param: typeof eo.param === 'string' ? eo.param : null,
    };
  }
  if (typeof b.message === 'string') return { message: b.message, code: typeof b.code === 'string' ? b.code : undefined };
  return { message: text.slice(0, 500) };
}

/** Build the normalized error for a non-2xx upstream response. */
export function errorFromResponse(
  status: number,
  bodyText: string,
  headers: UpstreamHeaders,
  now: number,
): UpstreamError {
  const parsed = parseErrorBody(bodyText);
  const category = categorize(status, `${parsed.code ?? ''} ${parsed.message}`);
  return new UpstreamError({
    category,
    status,
    message: parsed.message || `upstream answered ${status}`,
    providerCode: parsed.code,
    // A 429 without Retry-After may still say when: in its message, or by the reset of the limit it spent.
    retryAfterMs: parseRetryAfter(headers, now) ?? hintedWait(category, parsed.message) ?? (category === 'rate_limited' ? exhaustedWaitMs(headers, now) : undefined),
    headers,
    param: parsed.param ?? null,
  });
}

/** A rate limit's or overload's wait named only in its message ("Please try again in 2.002s"). */
export function hintedWait(category: ErrorCategory, message: string): number | undefined {
  return category === 'rate_limited' || category === 'overloaded' ? retryHintMs(message) : undefined;
}

/**
 * A thrown transport error (undici, node:net: reset, refused, DNS, TLS, a body cut
 * short) → `network`, or `timeout` for undici's own header/body timeouts.
 */
export function errorFromTransport(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } } | undefined;
  const code = e?.code ?? e?.cause?.code ?? '';
  const timeout = /TIMEOUT/.test(code) && code !== 'UND_ERR_CONNECT_TIMEOUT';
  const message = e?.cause?.message ?? e?.message ?? String(err);
  return new UpstreamError({
    category: timeout ? 'timeout' : 'network',
    message: code ? `${code}: ${message}` : message,
    providerCode: code || undefined,
    cause: err,
  });
}

// OpenAI's codes for a parameter, or a value of one, that this model does not take (a reasoning
// model given `max_tokens` or `temperature: 0.2`); others say it in words (Ollama's "does not
// support tools", Gemini's "Developer instruction is not enabled for models/gemma-3-27b-it").
// Gemini's MISSING_THOUGHT_SIGNATURE (gemini/no-answer.ts): a history this model takes only with
// the signatures it left on its function calls, which another model takes as it is. Gemini 3
// behind its OpenAI-compatible endpoint says the same with a 400 INVALID_ARGUMENT "Function call
// is missing a thought_signature in functionCall parts" (a history begun on another model).
const UNSUPPORTED_CODES: ReadonlySet<string> = new Set(['unsupported_parameter', 'unsupported_value', 'OperationNotSupported', 'MISSING_THOUGHT_SIGNATURE']);
const UNSUPPORTED_RE =
  /\b(?:does not|doesn't|do not) support\b|\bnot supported (?:with|by|for|on) (?:this|the) model|\bonly supported (?:by|on|for) (?:certain|some) models|\bis not enabled for models\/|\bmissing a thought_signature\b/i;

/**
 * An invalid_request that refuses what this model does not take, not the request as such:
 * another model in the chain may well take it, so it fails over instead of ending the chain
 * (policy.ts). The text is the upstream's message, read only on this error path.
 */
export function refusedByThisModel(err: UpstreamError): boolean {
  if (err.category !== 'invalid_request') return false;
  // Refused for its size against a limit the error names (providers/refused-for-size.ts), whatever its words.
  if (err.inputTokenLimit !== undefined) return true;
  if (err.providerCode !== undefined && UNSUPPORTED_CODES.has(err.providerCode)) return true;
  const text = err.message.slice(0, 1000);
  return UNSUPPORTED_RE.test(text) || WRONG_OPERATION_RE.test(text) || exceedsTokenLimit(text);
}
