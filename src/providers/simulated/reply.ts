/**
 * The simulated upstream's answer, a pure function of the request: same
 * request, same reply, same usage. The text is cut into token-like pieces that
 * the stream delivers one per chunk.
 */
import type {
  ChatCompletion,
  ChatMessage,
  ChatRequest,
  ToolCall,
  Usage,
} from '../../protocol/openai.js';

export interface ReplyIdentity {
  provider: string;
  model: string;
}

export interface SimReply {
  /** Content pieces in order; empty for a tool call. Their concatenation is the content. */
  pieces: string[];
  toolCall?: ToolCall;
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage: Usage;
}

/** Per-message overhead in the prompt estimate, as chat formats add role markers. */
const TOKENS_PER_MESSAGE = 3;
const TOOL_CALL_ID = 'call_sim_1';
const TOOL_ARGUMENTS = '{"ok":true}';
const PIECE_RE = /\s*\S+\s*/g;

export function simulateReply(req: ChatRequest, who: ReplyIdentity, template?: string): SimReply {
  const messages = req.messages;
  const last = messages[messages.length - 1];
  const prefill = last?.role === 'assistant' && !last.tool_calls?.length ? messageText(last) : '';
  const usageIn = promptTokens(messages);

  const toolName = forcedTool(req);
  if (toolName !== undefined) {
    const toolCall: ToolCall = { id: TOOL_CALL_ID, type: 'function', function: { name: toolName, arguments: TOOL_ARGUMENTS } };
    const completion = Math.ceil((toolName.length + TOOL_ARGUMENTS.length) / 4);
    return { pieces: [], toolCall, finishReason: 'tool_calls', usage: usage(usageIn, completion) };
  }

  // A trailing assistant prefill is the reply so far, not part of the conversation:
  // counting it would change the default text and break continuation.
  const conversation = prefill ? messages.length - 1 : messages.length;
  const full = replyText(who, conversation, template);
  // Prefill continuation: a resumed stream must deliver the answer exactly once.
  const text = prefill && full.startsWith(prefill) ? full.slice(prefill.length) : full;
  let pieces = splitPieces(text);
  let finishReason: SimReply['finishReason'] = 'stop';
  const limit = req.max_completion_tokens ?? req.max_tokens;
  if (typeof limit === 'number' && limit >= 0 && pieces.length > limit) {
    pieces = pieces.slice(0, limit);
    finishReason = 'length';
  }
  return { pieces, finishReason, usage: usage(usageIn, pieces.length) };
}

export function replyText(who: ReplyIdentity, messageCount: number, template?: string): string {
  if (template !== undefined) return template.replaceAll('{model}', who.model).replaceAll('{provider}', who.provider);
  return `Hello from ${who.provider}/${who.model}. This is a simulated reply to a conversation of ${messageCount} messages.`;
}

/** Words with their following whitespace; leading whitespace stays on the first piece. */
export function splitPieces(text: string): string[] {
  const pieces = text.match(PIECE_RE);
  if (pieces) return pieces;
  return text.length > 0 ? [text] : [];
}

export function messageText(m: ChatMessage): string {
  const c = m.content;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  let text = '';
  for (const part of c) if (part.type === 'text' && typeof part.text === 'string') text += part.text;
  return text;
}

export interface ReplyMeta {
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
}

export const SYSTEM_FINGERPRINT = 'fp_simulated';

export function toCompletion(reply: SimReply, meta: ReplyMeta): ChatCompletion {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: reply.toolCall
          ? { role: 'assistant', content: null, tool_calls: [reply.toolCall], refusal: null }
          : { role: 'assistant', content: reply.pieces.join(''), refusal: null },
        logprobs: null,
        finish_reason: reply.finishReason,
      },
    ],
    usage: reply.usage,
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}

/** The named function when the request forces a tool call, else undefined. */
function forcedTool(req: ChatRequest): string | undefined {
  const tools = req.tools;
  if (!tools || tools.length === 0) return undefined;
  const choice = req.tool_choice;
  if (choice === 'required') return tools[0]!.function.name;
  if (choice && typeof choice === 'object' && choice.type === 'function') {
    return choice.function?.name ?? tools[0]!.function.name;
  }
  return undefined;
}

function promptTokens(messages: ChatMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    chars += messageText(m).length;
    if (m.tool_calls) for (const tc of m.tool_calls) chars += tc.function.name.length + tc.function.arguments.length;
  }
  return Math.ceil(chars / 4) + TOKENS_PER_MESSAGE * messages.length;
}

function usage(prompt: number, completion: number): Usage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
