/**
 * Providers cap the texts one embeddings call may carry (Gemini's
 * batchEmbedContents 100, Cohere's embed 96) where OpenAI takes 2,048 (the
 * most validate.ts lets through): a larger request is sent as several calls,
 * a few at a time, and answered as one — vectors in input order, usage
 * summed. The first call to fail stops the rest (those out are aborted, none
 * more is sent) and fails the attempt; the executor then retries or fails
 * over the whole request. When another call was answered before it, the
 * attempt reached the upstream whatever the failing call's own error (a
 * refused connection alone would give the capacity of every call back). The
 * pacer takes capacity for every call before the first goes (the adapter's
 * `embeddingBatch`; core/gateway.ts embeddingCalls): for the largest request
 * OpenAI allows, 21 to Gemini and 22 to Cohere (docs/rate-limits.md).
 */
import { Cancellation, type Signal } from '../core/signal.js';
import type { EmbeddingsResponse } from '../protocol/openai.js';
import { isUpstreamError } from '../resilience/upstream-error.js';
import type { EmbeddingsResult } from './types.js';
import { embeddingCountError } from './embedding-count.js';

/** Calls out at once for one request: enough for speed, few enough to be polite to the provider. */
const CONCURRENCY = 4;

export async function embedInBatches(
  texts: string[],
  limit: number,
  signal: Signal,
  call: (batch: string[], signal: Signal) => Promise<EmbeddingsResult>,
): Promise<EmbeddingsResult> {
  if (texts.length <= limit) return call(texts, signal);
  const batches: string[][] = [];
  for (let i = 0; i < texts.length; i += limit) batches.push(texts.slice(i, i + limit));
  const answers: EmbeddingsResult[] = new Array(batches.length);
  const stop = new Cancellation();
  const unlink = stop.follow(signal);
  let next = 0;
  let answered = 0;
  const worker = async (): Promise<void> => {
    while (next < batches.length && !stop.aborted) {
      const i = next++;
      try {
        answers[i] = await call(batches[i]!, stop);
        answered++;
      } catch (err) {
        if (!stop.aborted) {
          // The first failure: the calls still out are aborted, no more start. A call answered
          // proves the upstream up and counting, so the pacer's capacity for the batch stays
          // taken (the executor reads this). Calls merely started beside this one prove
          // nothing: with the upstream down, the four sent at once are all refused.
          if (answered > 0 && isUpstreamError(err)) err.reachedUpstream = true;
          stop.abort(err);
        }
        throw err;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, batches.length) }, worker));
  } finally {
    unlink();
  }
  const first = answers[0]!.response;
  let tokens = 0;
  const data: EmbeddingsResponse['data'] = [];
  for (const { response } of answers) {
    tokens += response.usage.prompt_tokens;
    for (const e of response.data) data.push({ ...e, index: data.length });
  }
  // Each call's adapter checks its own count; the sum is checked too, as vectors are paired by position.
  if (data.length !== texts.length) {
    const err = embeddingCountError('upstream', data.length, texts.length);
    err.reachedUpstream = true;
    throw err;
  }
  // The last answer's headers: the freshest word on the provider's remaining limits.
  return { response: { object: 'list', data, model: first.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }, headers: answers[answers.length - 1]!.headers };
}
