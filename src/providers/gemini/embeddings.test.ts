import { describe, expect, it } from 'vitest';
import type { EmbeddingsRequest } from '../../protocol/openai.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { embeddingTexts, estimateTokens, fromBatchEmbedResponse, toBatchEmbedRequest } from './embeddings.js';

describe('gemini embeddings conversion', () => {
  it('accepts a string or a list of strings, refuses token arrays and empty input as invalid_request', () => {
    expect(embeddingTexts({ model: 'm', input: 'one' })).toEqual(['one']);
    expect(embeddingTexts({ model: 'm', input: ['a', 'b'] })).toEqual(['a', 'b']);
    for (const input of [[1, 2, 3], [[1, 2]], []] as EmbeddingsRequest['input'][]) {
      let err: unknown;
      try {
        embeddingTexts({ model: 'm', input });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(UpstreamError);
      expect(err).toMatchObject({ category: 'invalid_request', param: 'input' });
    }
  });

  it('builds batchEmbedContents with models/NAME in every request and outputDimensionality', () => {
    expect(toBatchEmbedRequest(['a', 'b'], 'text-embedding-004', 64)).toEqual({
      requests: [
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'a' }] }, outputDimensionality: 64 },
        { model: 'models/text-embedding-004', content: { parts: [{ text: 'b' }] }, outputDimensionality: 64 },
      ],
    });
    expect(toBatchEmbedRequest(['a'], 'models/gemini-embedding-001').requests[0]).toEqual({
      model: 'models/gemini-embedding-001',
      content: { parts: [{ text: 'a' }] },
    });
  });

  it('returns the OpenAI list with estimated usage, floats or base64 float32', () => {
    const body = { embeddings: [{ values: [0.5, -1] }, { values: [0.25, 2] }] };
    const out = fromBatchEmbedResponse(body, ['abcd', 'efghij'], 'text-embedding-004', undefined);
    expect(out).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1] },
        { object: 'embedding', index: 1, embedding: [0.25, 2] },
      ],
      model: 'text-embedding-004',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    const b64 = fromBatchEmbedResponse(body, ['a', 'b'], 'm', 'base64').data[0]!.embedding as string;
    const buf = Buffer.from(b64, 'base64');
    expect([buf.readFloatLE(0), buf.readFloatLE(4)]).toEqual([0.5, -1]);
    expect(fromBatchEmbedResponse({ ...body, usageMetadata: { promptTokenCount: 11 } }, ['a', 'b'], 'm', 'float').usage.prompt_tokens).toBe(11);
    // Not a count (JSON's 1e999 parses as Infinity): estimated instead, never sent on as null.
    expect(fromBatchEmbedResponse({ ...body, usageMetadata: { promptTokenCount: Infinity } }, ['a', 'b'], 'm', 'float').usage.prompt_tokens).toBe(estimateTokens(['a', 'b']));
    expect(estimateTokens(['12345'])).toBe(2);
    // Non-ASCII text weighs more than its length / 4, as a prompt's does: 日本語 is 3 units, 9 UTF-8 bytes.
    expect(estimateTokens(['日本語'])).toBe(Math.ceil(3 / 4 + 6 * 0.75));
  });

  it('a count mismatch is the upstream’s fault (server), said in counts', () => {
    expect(() => fromBatchEmbedResponse({}, ['a'], 'm', undefined)).toThrow(UpstreamError);
    const short = { embeddings: [{ values: [0.5] }] };
    expect(() => fromBatchEmbedResponse(short, ['a', 'b'], 'm', undefined)).toThrow(expect.objectContaining({ category: 'server', message: 'gemini answered 1 embeddings for 2 inputs' }));
  });
});

describe('fromBatchEmbedResponse: an entry without a vector of numbers', () => {
  it.each([[{}], [{ values: null }], [{ values: [0.5, null] }], [{ values: 'x' }], [null]])('%j is a malformed answer, not an empty vector', (bad) => {
    const body = { embeddings: [{ values: [0.5, -1] }, bad] } as never;
    expect(() => fromBatchEmbedResponse(body, ['a', 'b'], 'm', 'float')).toThrow(UpstreamError);
    expect(() => fromBatchEmbedResponse(body, ['a', 'b'], 'm', 'base64')).toThrow(UpstreamError);
  });
});
