import { describe, expect, it } from 'vitest';
import { Cancellation } from '../core/signal.js';
import type { EmbeddingsResponse } from '../protocol/openai.js';
import { embedInBatches } from './embedding-batches.js';
import type { EmbeddingsResult } from './types.js';

/** An answer of `n` vectors, as an adapter's call returns it. */
const answer = (n: number): EmbeddingsResult => ({
  response: {
    object: 'list',
    data: Array.from({ length: n }, (_, index): EmbeddingsResponse['data'][number] => ({ object: 'embedding', index, embedding: [index] })),
    model: 'm',
    usage: { prompt_tokens: n, total_tokens: n },
  },
  headers: {},
});

const texts = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

describe('embedInBatches', () => {
  it('answers the batches as one, vectors in input order', async () => {
    const out = await embedInBatches(texts(5), 2, new Cancellation(), async (batch) => answer(batch.length));
    expect(out.response.data.map((e) => e.index)).toEqual([0, 1, 2, 3, 4]);
    expect(out.response.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
  });

  it('fails the attempt (server, reached the upstream) when the vectors do not add up to the inputs', async () => {
    // An adapter whose call let a short batch through: the total still does not pass.
    const short = embedInBatches(texts(5), 2, new Cancellation(), async (batch) => answer(batch.length === 1 ? 0 : batch.length));
    await expect(short).rejects.toMatchObject({ category: 'server', reachedUpstream: true, message: 'upstream answered 4 embeddings for 5 inputs' });
  });
});
