import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { fromCohereEmbed, toCohereEmbed } from './embeddings.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));

describe('OpenAI embeddings ⇄ Cohere /v2/embed', () => {
  it('sends texts as search documents asking for floats', () => {
    expect(toCohereEmbed({ model: 'e', input: 'hello' }, 'embed-english-v3.0')).toEqual({
      model: 'embed-english-v3.0',
      texts: ['hello'],
      input_type: 'search_document',
      embedding_types: ['float'],
    });
    expect(toCohereEmbed({ model: 'e', input: ['a', 'b'], dimensions: 256 }, 'embed-v4.0')).toMatchObject({ texts: ['a', 'b'], output_dimension: 256 });
  });

  it('refuses token-id input as invalid_request', () => {
    expect(() => toCohereEmbed({ model: 'e', input: [1, 2, 3] }, 'm')).toThrow(UpstreamError);
  });

  it('converts the response into the OpenAI list shape with billed input tokens', () => {
    expect(fromCohereEmbed(fixture('embed.json'), 'embed-english-v3.0', undefined, 2)).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.016296387, -0.008354187, -0.04699707] },
        { object: 'embedding', index: 1, embedding: [-0.0234375, 0.041137695, 0.0073242188] },
      ],
      model: 'embed-english-v3.0',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
  });

  it('encodes base64 as little-endian float32, as OpenAI does', () => {
    const out = fromCohereEmbed({ embeddings: { float: [[0.5, -1, 2]] } }, 'm', 'base64', 1);
    const bytes = Buffer.from(out.data[0]!.embedding as string, 'base64');
    expect([0, 1, 2].map((i) => bytes.readFloatLE(i * 4))).toEqual([0.5, -1, 2]);
  });

  it('treats a response without float embeddings as the upstream failing', () => {
    expect(() => fromCohereEmbed({ embeddings: {} }, 'm', undefined, 1)).toThrow(/without 1 float embeddings/);
  });

  it('treats a vector that is not numbers, or a count that does not match the inputs, as the upstream failing', () => {
    for (const encoding of [undefined, 'base64'] as const) {
      for (const float of [[null], [[0.1, 'x']], [[0.1, null]], [5], [{ length: 1e10 }], [], [[0.1], [0.2]]]) {
        expect(() => fromCohereEmbed({ embeddings: { float } }, 'm', encoding, 1), JSON.stringify(float)).toThrow(UpstreamError);
      }
    }
  });

  it('says a wrong count in counts', () => {
    expect(() => fromCohereEmbed({ embeddings: { float: [[0.1]] } }, 'm', undefined, 2)).toThrow(expect.objectContaining({ category: 'server', message: 'cohere answered 1 embeddings for 2 inputs' }));
  });

  it('reads only a count as the token usage', () => {
    expect(fromCohereEmbed({ embeddings: { float: [[1]] }, meta: { billed_units: { input_tokens: '4' } } }, 'm', undefined, 1).usage).toEqual({ prompt_tokens: 0, total_tokens: 0 });
    expect(fromCohereEmbed({ embeddings: { float: [[1]] }, meta: { billed_units: { input_tokens: -1 }, tokens: { input_tokens: 3 } } }, 'm', undefined, 1).usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });
});
