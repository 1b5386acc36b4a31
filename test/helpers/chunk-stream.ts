/**
 * Reading a native adapter's chunk stream in tests: its wire text fed in pieces as
 * a socket delivers it (events and lines split anywhere), and read to its end or
 * its error.
 */
import type { ChatCompletionChunk, Usage } from '../../src/protocol/openai.js';
import type { ChunkStream } from '../../src/providers/types.js';

/** `text` in pieces of `size` characters. */
export async function* piecesOf(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

/** The chunks that came, the error the stream ended with (undefined when it ended whole), and its malformed count. */
export async function readChunks(stream: ChunkStream): Promise<{ chunks: ChatCompletionChunk[]; error: unknown; malformed: number }> {
  const chunks: ChatCompletionChunk[] = [];
  let error: unknown;
  try {
    for await (const c of stream) chunks.push(c);
  } catch (e) {
    error = e;
  }
  return { chunks, error, malformed: stream.malformed };
}

/**
 * The chunks a native adapter streams for a text answer: the role chunk, a content delta
 * per piece, the `stop` finish, then the usage alone; each with `base`'s fields (id,
 * object, created, model, system_fingerprint) and `logprobs: null` on its choice.
 */
export function textAnswerChunks(base: Record<string, unknown>, pieces: string[], usage: Usage): unknown[] {
  const choice = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason }] });
  return [choice({ role: 'assistant', content: '', refusal: null }), ...pieces.map((content) => choice({ content })), choice({}, 'stop'), { ...base, choices: [], usage }];
}
