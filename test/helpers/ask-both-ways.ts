/**
 * One request to an adapter buffered, then streamed: the comparison the native
 * adapters' socket tests make. The caller queues an upstream answer for each.
 */
import type { ChatRequest } from '../../src/protocol/openai.js';
import type { AttemptContext, ProviderAdapter } from '../../src/providers/types.js';
import { assembleStream } from './assemble-stream.js';

export async function askBothWays(adapter: ProviderAdapter, req: ChatRequest, ctx: AttemptContext) {
  const buffered = (await adapter.chat(req, ctx)).response;
  const stream = await adapter.chatStream(req, ctx);
  const { out, chunks } = await assembleStream(stream);
  return { buffered, out, chunks, malformed: stream.malformed };
}
