/**
 * `azure`: OpenAI on Azure. The OpenAI wire format at deployment-scoped paths
 * (`/openai/deployments/{deployment}/...?api-version=...`), an `api-key`
 * header, and the deployment name standing in for the model. Everything else
 * is the OpenAI-compatible adapter's.
 */
import { OpenAICompatibleAdapter } from '../openai/index.js';
import type { AdapterDeps, AttemptContext, ChunkStream, ProviderAdapter } from '../types.js';
import type { ProviderConfig } from '../../config/types.js';
import type { ChatCompletionChunk, ChatRequest } from '../../protocol/openai.js';
// The config defaults apiVersion already; this covers a ProviderConfig built by hand.
import { DEFAULT_AZURE_API_VERSION } from '../../config/defaults.js';
import { apiKeyHeader } from '../api-key-header.js';

export { DEFAULT_AZURE_API_VERSION };

class AzureOpenAIAdapter extends OpenAICompatibleAdapter {
  override async chatStream(req: ChatRequest, ctx: AttemptContext): Promise<ChunkStream> {
    return new AzureChunkStream(await super.chatStream(req, ctx));
  }
}

/**
 * Azure opens every stream with a chunk that has no choices and no usage, only
 * `prompt_filter_results` (and empty `id`/`model`). It carries nothing a client
 * of the gateway needs and would break "the role chunk comes first", so it is
 * dropped; the final usage-only chunk is kept.
 */
class AzureChunkStream implements ChunkStream {
  constructor(private readonly inner: ChunkStream) {}

  get headers(): ChunkStream['headers'] {
    return this.inner.headers;
  }

  get malformed(): number {
    return this.inner.malformed;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ChatCompletionChunk> {
    for await (const chunk of this.inner) {
      if (chunk.choices.length === 0 && !chunk.usage) continue;
      yield chunk;
    }
  }
}

export function createAzureAdapter(provider: ProviderConfig, deps: AdapterDeps): ProviderAdapter {
  // The resource endpoint is the documented baseUrl; one that already ends in
  // `/openai` (the SDK's `baseURL` form) must not get it twice.
  const root = new URL(provider.baseUrl).pathname.replace(/\/+$/, '').endsWith('/openai') ? '' : '/openai';
  return new AzureOpenAIAdapter(provider, deps, {
    chatPath: (model) => `${root}/deployments/${encodeURIComponent(model)}/chat/completions`,
    embeddingsPath: (model) => `${root}/deployments/${encodeURIComponent(model)}/embeddings`,
    authHeaders: apiKeyHeader(provider),
    query: `api-version=${encodeURIComponent(provider.apiVersion ?? DEFAULT_AZURE_API_VERSION)}`,
  });
}
