/**
 * The fields OpenAI always sends and strict clients require (typed decoders,
 * the openai SDK's own types): what every native adapter's answer must carry,
 * checked as the client decodes it — a field left undefined is absent on the wire.
 */
import { expect } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/protocol/openai.js';

/** As the client decodes it: JSON there and back (undefined fields vanish). */
export const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** `system_fingerprint` and `logprobs` null everywhere, `message.refusal` null, and `delta.refusal: null` in the role chunk only. */
export function expectOpenAINullFields(answer: ChatCompletion, streamed: ChatCompletionChunk[]): void {
  const buffered = wire(answer);
  const chunks = wire(streamed);
  expect(buffered).toHaveProperty('system_fingerprint', null);
  expect(buffered.choices[0]).toMatchObject({ logprobs: null, message: { refusal: null } });
  for (const c of chunks) {
    expect(c).toHaveProperty('system_fingerprint', null);
    for (const choice of c.choices) expect(choice).toHaveProperty('logprobs', null);
  }
  expect(chunks.filter((c) => c.choices[0]?.delta.refusal === null).map((c) => c.choices[0]!.delta.role)).toEqual(['assistant']);
}
