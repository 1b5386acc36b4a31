/**
 * The buffered choice a native adapter answers a tool-calling turn with, in OpenAI's
 * shape: content null (no text came), the calls with JSON-text arguments, `refusal`
 * and `logprobs` null, finish_reason `tool_calls`.
 */
export function toolCallChoice(calls: { id: string; name: string; arguments: string }[]) {
  return {
    index: 0,
    message: {
      role: 'assistant',
      content: null,
      tool_calls: calls.map(({ id, name, arguments: args }) => ({ id, type: 'function', function: { name, arguments: args } })),
      refusal: null,
    },
    logprobs: null,
    finish_reason: 'tool_calls',
  };
}
