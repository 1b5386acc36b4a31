/**
 * What an embeddings request's texts are for, as a client says it in
 * `input_type`: a field OpenAI's API lacks, named as Cohere and LiteLLM name
 * it. Retrieval models embed a query and a document differently — Cohere's v3
 * and later require the type, Gemini takes it as `taskType` — and a query
 * embedded as a document retrieves worse. Native adapters translate it;
 * OpenAI-format upstreams (vLLM, NVIDIA NIM, a LiteLLM proxy) get the field as
 * the client sent it, whatever their own vocabulary.
 *
 * Accepted: Cohere's four values, and the `query`, `document` and `passage`
 * that Voyage and NVIDIA NIM use, so one client works across them. Any other
 * value is a request the native provider cannot express: its candidate is
 * passed over (the executor's `unsent`), never sent with a guessed type.
 */
import type { EmbeddingsRequest } from '../protocol/openai.js';
import { UpstreamError } from '../resilience/upstream-error.js';

export type InputType = 'search_document' | 'search_query' | 'classification' | 'clustering';

const NAMES: ReadonlyMap<string, InputType> = new Map([
  ['search_document', 'search_document'],
  ['search_query', 'search_query'],
  ['classification', 'classification'],
  ['clustering', 'clustering'],
  ['document', 'search_document'],
  ['passage', 'search_document'],
  ['query', 'search_query'],
]);

/** The request's `input_type`, undefined when it sets none; throws for a value no native provider has. */
export function inputTypeOf(req: EmbeddingsRequest, provider: string): InputType | undefined {
  const v = req.input_type;
  if (v === undefined || v === null) return undefined;
  const type = typeof v === 'string' ? NAMES.get(v) : undefined;
  if (type === undefined) {
    throw new UpstreamError({
      category: 'invalid_request',
      message: `${provider} embeddings take input_type ${[...NAMES.keys()].join(', ')}`,
      param: 'input_type',
      unsent: true,
    });
  }
  return type;
}
