/**
 * Mapping attempt failures to what the executor and the client see.
 */
import { CREDENTIAL_HEADERS } from '../config/secrets.js';
import type { ProviderConfig } from '../config/types.js';
import { GatewayError } from '../core/errors.js';
import { AttemptAborted } from './abort.js';
import { errorFromTransport, exceedsTokenLimit } from './classify.js';
import { UpstreamError } from './upstream-error.js';

/**
 * A bug (ours or an adapter's) meeting input it did not expect: a TypeError and
 * the like without a transport `code`. Not the upstream's fault, so it must not
 * be retried or counted against the deployment's health.
 */
export function isProgrammingError(err: unknown): boolean {
  if (!(err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError || err instanceof ReferenceError || err instanceof URIError)) return false;
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  return e.code === undefined && e.cause?.code === undefined;
}

export const internalFault = (deployment: string, err: unknown) =>
  new GatewayError(500, 'internal_error', `The gateway failed while handling this request for ${deployment}`, null, undefined, err);

/**
 * Thrown failures → an UpstreamError, or the AttemptAborted that ends the whole request (client
 * gone, deadline, shutdown). `provider`: the attempt's, whose credentials its error must not carry.
 */
export function normalizeFailure(err: unknown, provider: ProviderConfig): UpstreamError | AttemptAborted {
  if (err instanceof AttemptAborted) {
    if (err.kind === 'client' || err.kind === 'deadline' || err.kind === 'shutdown') return err;
    return new UpstreamError({ category: 'timeout', message: err.message, providerCode: err.kind });
  }
  if (err instanceof UpstreamError) return withoutCredentials(err, provider);
  return errorFromTransport(err);
}

/** Shorter values are not looked for: they would blank ordinary words of the message. */
const MIN_SECRET_CHARS = 8;

/**
 * An upstream's own message reaches the client (a refusal passed through, a pinned model's 404,
 * the reason a stream broke), and some servers and proxies echo the request's headers in it: the
 * provider's key, sent by the gateway and never the client's to see, is cut out of it. Only on
 * the failure path, and only a few `includes` of the provider's own credentials.
 */
function withoutCredentials(err: UpstreamError, provider: ProviderConfig): UpstreamError {
  let message = err.message;
  const cut = (secret: string | undefined): void => {
    if (secret !== undefined && secret.length >= MIN_SECRET_CHARS && message.includes(secret)) message = message.split(secret).join('[redacted]');
  };
  cut(provider.apiKey);
  for (const name in provider.headers) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) continue;
    const value = provider.headers[name]!;
    cut(value);
    cut(/^bearer\s+(.+)$/i.exec(value)?.[1]);
  }
  if (message !== err.message) err.message = message;
  return err;
}

/**
 * A run that waited for capacity ended with its one candidate refusing the request (too large
 * for it, a parameter it does not take): that candidate's last word, for the run that waited to
 * weigh with the others' (executor.ts waitForCapacity), never an answer of its own.
 */
export class RefusedAfterWait extends Error {
  constructor(
    readonly upstream: UpstreamError,
    readonly deployment: string,
  ) {
    super(upstream.message);
  }
}

/**
 * 404 `model_not_found` with the upstream's message: the client pinned a model its provider
 * does not have, or every candidate's deployment named one. Keeps the upstream error, so a
 * chain that waited for capacity can count it as that candidate's last word.
 */
export class ModelNotFoundError extends GatewayError {
  constructor(readonly upstream: UpstreamError) {
    super(404, 'model_not_found', upstream.message, 'model');
  }
}

/** A fail-fast upstream error as the client sees it (status and message passed through). */
export function clientErrorFor(err: UpstreamError): GatewayError {
  switch (err.category) {
    case 'not_found':
      return new ModelNotFoundError(err);
    case 'content_policy':
      return new GatewayError(400, 'content_policy_violation', err.message, err.param ?? null);
    case 'context_length':
      return new GatewayError(400, 'context_length_exceeded', err.message, err.param ?? 'messages');
    default: {
      const s = err.status ?? err.meantStatus;
      // A 429 refusing the request for its size (larger than a deployment's tpm) is the request's fault,
      // not a rate limit: the contract keeps 429 for the client's own key, and 413 for a body over
      // the gateway's own limit (Groq says the same as OpenAI's 429 with a 413).
      const tooLargeForTpm = s === 413 && exceedsTokenLimit(err.message);
      const status = s !== undefined && s >= 400 && s < 500 && s !== 429 && !tooLargeForTpm ? s : 400;
      // The status keeps the contract's pairing: an upstream's 413 (a body larger than it takes) is the
      // client's `payload_too_large`, as the gateway's own bound is; every other refusal `invalid_request`.
      return new GatewayError(status, status === 413 ? 'payload_too_large' : 'invalid_request', err.message, err.param ?? null);
    }
  }
}

export const deadlineError = () => new GatewayError(504, 'timeout', 'The request deadline passed before any candidate answered');

/**
 * 503 with Retry-After: the SDKs retry it, and behind a load balancer the retry
 * reaches a gateway that is not stopping.
 */
export const shuttingDownError = () => new GatewayError(503, 'shutting_down', 'The gateway is shutting down; retry the request', null, 1);

/**
 * A request-ending abort as the client sees it: the deadline a 504, the
 * shutdown a 503; anything else (the client gone, another failure) unchanged.
 */
export function asAnswer(e: unknown): unknown {
  if (!(e instanceof AttemptAborted)) return e;
  if (e.kind === 'deadline') return deadlineError();
  if (e.kind === 'shutdown') return shuttingDownError();
  return e;
}

export interface FailureNote {
  deployment: string;
  label: string;
  /** The upstream answered 404: the deployment's model does not exist there. */
  notFound?: boolean;
  /** This candidate alone refused the request (it could not express it, or its model does not take a parameter). */
  refused?: boolean;
}

/**
 * Every candidate's last failure was a 404: the model is missing wherever the chain looked,
 * and the client is better told so (a single-deployment alias with a typo) than told to retry.
 */
export function allNotFound(notes: readonly FailureNote[]): boolean {
  const last = new Map<string, boolean>();
  for (const n of notes) last.set(n.deployment, n.notFound === true);
  for (const notFound of last.values()) if (!notFound) return false;
  return last.size > 0;
}

/**
 * Every candidate's last word was a refusal of the request by it alone: none can serve it,
 * so the client's request is the problem, not availability. The last, as a candidate that met
 * a 503 and was refused on its retry has refused it all the same.
 */
export function allRefused(notes: readonly FailureNote[]): boolean {
  const last = new Map<string, boolean>();
  for (const n of notes) last.set(n.deployment, n.refused === true);
  for (const refused of last.values()) if (!refused) return false;
  return last.size > 0;
}

/** Every candidate failed or was unavailable: 503 naming each one's last error, Retry-After the earliest recovery. */
export function exhaustedError(notes: FailureNote[], retryAt: number, now: number): GatewayError {
  const last = new Map<string, string>();
  for (const n of notes) last.set(n.deployment, n.label);
  const detail = [...last].map(([d, l]) => `${d}: ${l}`).join('; ');
  const retryAfterS = Math.max(1, Math.ceil((retryAt - now) / 1000));
  return new GatewayError(503, 'all_candidates_unavailable', `All candidates are unavailable (${detail || 'none tried'})`, null, retryAfterS);
}
