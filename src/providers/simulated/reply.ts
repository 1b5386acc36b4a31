/**
 * The simulated upstream's answer, a pure function of the request: same
 * request, same reply, same usage. The text is cut into token-like pieces that
 * the stream delivers one per chunk, ending at `stop` or `max_tokens` as a
 * model's would; a JSON `response_format` gets JSON (json-reply.ts). `n` > 1 gets that many choices, each with
 * its own text (it names its index), as OpenAI answers: the prompt counted
 * once, the completions of every choice together.
 */
import type {
  ChatCompletion,
  ChatMessage,
  ChatRequest,
  ToolCall,
  Usage,
} from '../../protocol/openai.js';
import { jsonReply } from './json-reply.js';

export interface ReplyIdentity {
  provider: string;
  model: string;
}

export interface SimChoice {
  /** Content pieces in order; empty for a tool call. Their concatenation is the content. */
  pieces: string[];
  toolCall?: ToolCall;
  finishReason: 'stop' | 'length' | 'tool_calls';
}

export interface SimReply {
  /** One per requested choice (`n`), choices[i] being index i. */
  choices: SimChoice[];
  usage: Usage;
}

/** Per-message overhead in the prompt estimate, as chat formats add role markers. */
const TOKENS_PER_MESSAGE = 3;
const TOOL_ARGUMENTS = '{"ok":true}';
const PIECE_RE = /\s*\S+\s*/g;
/** OpenAI's bound on `n` (the gateway refuses more; the loopback fault server reads bodies unchecked). */
const MAX_CHOICES = 128;

export function simulateReply(req: ChatRequest, who: ReplyIdentity, template?: string): SimReply {
  const messages = req.messages;
  const n = typeof req.n === 'number' && req.n > 1 ? Math.min(Math.floor(req.n), MAX_CHOICES) : 1;
  const choices: SimChoice[] = [];
  let completion = 0;
  for (let index = 0; index < n; index++) {
    const choice = simulateChoice(req, who, template, index, n);
    choices.push(choice);
    completion += choice.toolCall ? Math.ceil((choice.toolCall.function.name.length + TOOL_ARGUMENTS.length) / 4) : choice.pieces.length;
  }
  return { choices, usage: usage(promptTokens(messages), completion) };
}

function simulateChoice(req: ChatRequest, who: ReplyIdentity, template: string | undefined, index: number, n: number): SimChoice {
  const messages = req.messages;
  const toolName = forcedTool(req);
  if (toolName !== undefined) {
    // Ids unique within the answer, as OpenAI's are: choice 0's is call_sim_1, as with n = 1.
    const toolCall: ToolCall = { id: `call_sim_${index + 1}`, type: 'function', function: { name: toolName, arguments: TOOL_ARGUMENTS } };
    return { pieces: [], toolCall, finishReason: 'tool_calls' };
  }

  const last = messages[messages.length - 1];
  const prefill = last?.role === 'assistant' && !last.tool_calls?.length ? messageText(last) : '';
  // A trailing assistant prefill is the reply so far, not part of the conversation:
  // counting it would change the default text and break continuation.
  const conversation = prefill ? messages.length - 1 : messages.length;
  const said = replyText(who, conversation, template, n > 1 ? index : undefined);
  const full = jsonReply(req.response_format, said) ?? said;
  // Prefill continuation: a resumed stream must deliver the answer exactly once.
  const text = prefill && full.startsWith(prefill) ? full.slice(prefill.length) : full;
  let pieces = splitPieces(beforeStop(text, req.stop));
  let finishReason: SimChoice['finishReason'] = 'stop';
  const limit = req.max_completion_tokens ?? req.max_tokens;
  if (typeof limit === 'number' && limit >= 0 && pieces.length > limit) {
    pieces = pieces.slice(0, limit);
    finishReason = 'length';
  }
  return { pieces, finishReason };
}

/**
 * The whole text of one choice. `choice`: its index when the request asked for
 * several (`{choice}` in a template; the default text names it), so each reads
 * differently; undefined for the one choice of `n` = 1.
 */
export function replyText(who: ReplyIdentity, messageCount: number, template?: string, choice?: number): string {
  if (template !== undefined) {
    return template.replaceAll('{model}', who.model).replaceAll('{provider}', who.provider).replaceAll('{choice}', String(choice ?? 0));
  }
  const which = choice === undefined ? '' : ` (choice ${choice})`;
  const messages = messageCount === 1 ? '1 message' : `${messageCount} messages`;
  return `Hello from ${who.provider}/${who.model}. This is a simulated reply${which} to a conversation of ${messages}.`;
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
    choices: reply.choices.map((choice, index) => ({
      index,
      message: choice.toolCall
        ? { role: 'assistant', content: null, tool_calls: [choice.toolCall], refusal: null }
        : { role: 'assistant', content: choice.pieces.join(''), refusal: null },
      logprobs: null,
      finish_reason: choice.finishReason,
    })),
    usage: reply.usage,
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}

/**
 * The text up to the first of the request's stop sequences, which OpenAI leaves out of
 * the answer (finish_reason `stop`). Only the generated text is searched, not a prefill:
 * a sequence spanning a resume's cut is the gateway's to find (stop-across-cut.ts).
 */
function beforeStop(text: string, stop: ChatRequest['stop']): string {
  if (stop == null) return text;
  let end = text.length;
  for (const s of typeof stop === 'string' ? [stop] : stop) {
    // The loopback fault server reads bodies unchecked: anything but a sequence is no stop.
    if (typeof s !== 'string' || s.length === 0) continue;
    const at = text.indexOf(s);
    if (at !== -1 && at < end) end = at;
  }
  return text.slice(0, end);
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
