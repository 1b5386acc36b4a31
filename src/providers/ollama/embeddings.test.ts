import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { fromOllamaEmbed, toOllamaEmbed } from './embeddings.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));

describe('OpenAI embeddings ⇄ Ollama /api/embed', () => {
  it('sends the input as is, with dimensions when asked', () => {
    expect(toOllamaEmbed({ model: 'e', input: ['a', 'b'] }, 'all-minilm')).toEqual({ model: 'all-minilm', input: ['a', 'b'] });
    expect(toOllamaEmbed({ model: 'e', input: 'a', dimensions: 64 }, 'm')).toEqual({ model: 'm', input: 'a', dimensions: 64 });
  });

  it('refuses token-id input as invalid_request', () => {
    expect(() => toOllamaEmbed({ model: 'e', input: [[1, 2]] }, 'm')).toThrow(UpstreamError);
  });

  it('converts the response into the OpenAI list shape', () => {
    const out = fromOllamaEmbed(fixture('embed.json'), 'all-minilm', 'float', 2);
    expect(out.object).toBe('list');
    expect(out.model).toBe('all-minilm');
    expect(out.data.map((d) => d.index)).toEqual([0, 1]);
    expect(out.data[1]!.embedding).toEqual([-0.0098027075, 0.06042469, 0.025257962, -0.006364387, 0.07272725]);
    expect(out.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
  });

  it('encodes base64 as little-endian float32', () => {
    const out = fromOllamaEmbed({ embeddings: [[1.5, -2]] }, 'm', 'base64', 1);
    const bytes = Buffer.from(out.data[0]!.embedding as string, 'base64');
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([1.5, -2]);
  });

  it('says a wrong count in counts', () => {
    expect(() => fromOllamaEmbed({ embeddings: [[0.1], [0.2], [0.3]] }, 'm', 'float', 2)).toThrow(expect.objectContaining({ category: 'server', message: 'ollama answered 3 embeddings for 2 inputs' }));
  });

  it('treats a vector that is not numbers, or a count that does not match the inputs, as the upstream failing', () => {
    for (const encoding of ['float', 'base64'] as const) {
      for (const embeddings of [[null], [[0.1, 'x']], [5], [{ length: 1e10 }], [], [[0.1], [0.2]]]) {
        expect(() => fromOllamaEmbed({ embeddings }, 'm', encoding, 1), JSON.stringify(embeddings)).toThrow(UpstreamError);
      }
    }
  });

  it('reads only a count as the token usage', () => {
    expect(fromOllamaEmbed({ embeddings: [[1]], prompt_eval_count: -5 }, 'm', 'float', 1).usage).toEqual({ prompt_tokens: 0, total_tokens: 0 });
  });
});
