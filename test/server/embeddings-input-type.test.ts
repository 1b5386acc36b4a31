/**
 * `input_type` on POST /v1/embeddings: what the texts are for (a query or a
 * document), which retrieval models embed differently. With the official
 * openai SDK over a real gateway: the loopback Cohere server gets it as its
 * `input_type`, the loopback Gemini server as every request's `taskType`, and an
 * OpenAI-format upstream (NVIDIA NIM, vLLM) as the client sent it.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRawUpstream, type RawUpstream } from '../helpers/raw-upstream.js';
import { startCohereServer, type CohereServer } from '../servers/cohere-server.js';
import { startGeminiServer, type GeminiServer } from '../servers/gemini-server.js';

let cohere: CohereServer;
let gemini: GeminiServer;
let nim: RawUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  cohere = await startCohereServer();
  gemini = await startGeminiServer();
  nim = await startRawUpstream((res, hit) => {
    const n = Array.isArray(hit.body.input) ? hit.body.input.length : 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: Array.from({ length: n }, (_, index) => ({ object: 'embedding', index, embedding: [0.5] })), model: 'nv', usage: { prompt_tokens: n, total_tokens: n } }));
  });
  gw = await startGateway({
    providers: [
      { id: 'co', type: 'cohere', baseUrl: cohere.url, apiKey: '${K}' },
      { id: 'gem', type: 'gemini', baseUrl: gemini.url, apiKey: '${K}' },
      { id: 'nim', type: 'openai', baseUrl: nim.url },
    ],
    models: [
      { name: 'co', deployments: [{ provider: 'co', model: 'embed-english-v3.0' }] },
      { name: 'gem', deployments: [{ provider: 'gem', model: 'text-embedding-004' }] },
      { name: 'nim', deployments: [{ provider: 'nim', model: 'nv-embedqa' }] },
    ],
  }, { env: { K: 'k' } });
  client = new OpenAI({ baseURL: gw.baseURL, apiKey: 'none', maxRetries: 0 });
});
afterAll(async () => {
  await gw.close(0);
  await Promise.all([cohere.close(), gemini.close(), nim.close()]);
});

/** An embeddings request with `input_type` (a field the SDK's types lack, sent as given). */
const embed = (model: string, input: string[], inputType?: string) =>
  client.embeddings.create({ model, input, encoding_format: 'float', ...(inputType === undefined ? {} : { input_type: inputType }) } as OpenAI.EmbeddingCreateParams);

describe('input_type', () => {
  it('reaches Cohere as its input_type: a query as search_query, and a document when the client says nothing', async () => {
    await embed('co', ['what is a gateway?'], 'search_query');
    expect(cohere.requests.at(-1)!.body).toMatchObject({ input_type: 'search_query' });
    // Voyage's and NIM's names for the same thing.
    await embed('co', ['what is a gateway?'], 'query');
    expect(cohere.requests.at(-1)!.body).toMatchObject({ input_type: 'search_query' });
    await embed('co', ['A gateway routes requests.'], 'passage');
    expect(cohere.requests.at(-1)!.body).toMatchObject({ input_type: 'search_document' });
    await embed('co', ['A gateway routes requests.']);
    expect(cohere.requests.at(-1)!.body).toMatchObject({ input_type: 'search_document' });
  });

  it('reaches Gemini as every request\'s taskType, and not at all when the client says nothing', async () => {
    await embed('gem', ['one', 'two'], 'search_query');
    const body = gemini.requests.at(-1)!.body as { requests: Record<string, unknown>[] };
    expect(body.requests.map((r) => r.taskType)).toEqual(['RETRIEVAL_QUERY', 'RETRIEVAL_QUERY']);
    await embed('gem', ['three'], 'clustering');
    expect((gemini.requests.at(-1)!.body as typeof body).requests[0]!.taskType).toBe('CLUSTERING');
    await embed('gem', ['four']);
    expect((gemini.requests.at(-1)!.body as typeof body).requests[0]).not.toHaveProperty('taskType');
  });

  it('goes to an OpenAI-format upstream as the client sent it, whatever its vocabulary', async () => {
    await embed('nim', ['A gateway routes requests.'], 'passage');
    expect(nim.hits.at(-1)!.body).toMatchObject({ input_type: 'passage', model: 'nv-embedqa' });
  });

  it('a value no native provider has is a 400 naming the field, and nothing is sent', async () => {
    const before = cohere.requests.length;
    const err = await embed('co', ['x'], 'banana').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input_type');
    expect(cohere.requests.length).toBe(before);
  });
});
