/**
 * An embeddings answer whose vectors do not pair one to one with the request's inputs.
 * Forwarded with a 200, it has the client pair vectors with the wrong texts, silently; as a
 * failed attempt (`server`, as any malformed answer) the request fails over instead. The
 * message is the gateway's own: counts, never the upstream's text.
 */
import { UpstreamError } from '../resilience/upstream-error.js';

/** `who` answered `answered` vectors for `inputs` inputs. */
export function embeddingCountError(who: string, answered: number, inputs: number): UpstreamError {
  return new UpstreamError({ category: 'server', message: `${who} answered ${answered} embeddings for ${inputs} inputs` });
}

/** The right number of vectors, but their `index` members do not name each input once. */
export function embeddingIndexError(who: string, inputs: number): UpstreamError {
  return new UpstreamError({ category: 'server', message: `${who} answered ${inputs} embeddings whose indexes are not 0..${inputs - 1} once each` });
}
