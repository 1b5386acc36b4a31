/**
 * What an OpenAI client assembles from a chat stream: the content, tool calls
 * (or a legacy function_call) joined from their deltas, the last finish reason
 * and the usage. Works on the gateway's own chunks and on the `openai` SDK's
 * (the same wire shape).
 */

interface ChunkLike<U> {
  usage?: U | null;
  choices: {
    delta: {
      content?: string | null;
      tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[];
      function_call?: { name?: string; arguments?: string };
    };
    finish_reason: string | null;
  }[];
}

export interface AssembledToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface Assembled<U> {
  /** null when no content delta came. */
  content: string | null;
  tool_calls?: AssembledToolCall[];
  function_call?: { name: string; arguments: string };
  finish_reason: string | null;
  usage?: U | null;
}

export async function assembleStream<C extends ChunkLike<unknown>>(
  stream: AsyncIterable<C>,
): Promise<{ out: Assembled<NonNullable<C['usage']>>; chunks: C[] }> {
  const chunks: C[] = [];
  let content: string | null = null;
  let finish: string | null = null;
  let usage: NonNullable<C['usage']> | null | undefined;
  const calls: AssembledToolCall[] = [];
  let fn: { name: string; arguments: string } | undefined;
  for await (const c of stream) {
    chunks.push(c);
    if (c.usage) usage = c.usage as NonNullable<C['usage']>;
    const choice = c.choices[0];
    if (!choice) continue;
    if (choice.delta.content) content = (content ?? '') + choice.delta.content;
    for (const t of choice.delta.tool_calls ?? []) {
      const call = (calls[t.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
      if (t.id) call.id = t.id;
      if (t.function?.name) call.function.name = t.function.name;
      call.function.arguments += t.function?.arguments ?? '';
    }
    const piece = choice.delta.function_call;
    if (piece) {
      fn ??= { name: '', arguments: '' };
      if (piece.name) fn.name = piece.name;
      fn.arguments += piece.arguments ?? '';
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  const out: Assembled<NonNullable<C['usage']>> = { content, finish_reason: finish, usage };
  if (calls.length > 0) out.tool_calls = calls;
  if (fn) out.function_call = fn;
  return { out, chunks };
}
