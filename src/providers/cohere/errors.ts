/**
 * Where the generic classifier misreads Cohere. Cohere answers 498 for an
 * invalid API token (generic: a 4xx, so `invalid_request`; it is a bad
 * credential: `auth`) and 499 when the request was cancelled on its side
 * (not the request's fault: `network`, so another attempt may serve it).
 */
import { UpstreamError, type ErrorCategory } from '../../resilience/upstream-error.js';
import { recategorized } from '../recategorized.js';
import { errorFromResponse } from '../../resilience/classify.js';
import type { ErrorMapper } from '../http.js';

export function fixCohereError<E extends Error>(err: E): E | UpstreamError {
  if (!(err instanceof UpstreamError)) return err;
  let category: ErrorCategory | undefined;
  if (err.status === 498) category = 'auth';
  else if (err.status === 499) category = 'network';
  if (category === undefined || category === err.category) return err;
  return recategorized(err, category);
}

/** Cohere's error answers: the generic reading, corrected as above. */
export const cohereErrorFromResponse: ErrorMapper = (status, body, headers, now) => fixCohereError(errorFromResponse(status, body, headers, now));
