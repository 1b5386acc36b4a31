/**
 * Where the generic classifier misreads Ollama. Its 503 means one thing only,
 * "server busy, please try again. maximum pending requests exceeded": a full
 * queue, i.e. `overloaded`, not a failing server. (Its 404 "model not found,
 * try pulling it first" is already `not_found`.)
 */
import { UpstreamError } from '../../resilience/upstream-error.js';
import { recategorized } from '../recategorized.js';
import { errorFromResponse } from '../../resilience/classify.js';
import type { ErrorMapper } from '../http.js';

export function fixOllamaError<E extends Error>(err: E): E | UpstreamError {
  if (!(err instanceof UpstreamError) || err.status !== 503 || err.category === 'overloaded') return err;
  return recategorized(err, 'overloaded');
}

/** Ollama's error answers: the generic reading, corrected as above. */
export const ollamaErrorFromResponse: ErrorMapper = (status, body, headers, now) => fixOllamaError(errorFromResponse(status, body, headers, now));
