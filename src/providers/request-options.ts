/**
 * What the native adapters (Anthropic, Gemini, Cohere, Ollama) read of a
 * request's `tool_choice`, `response_format`, `n`, `stop`, `logprobs`, tool
 * schemas and text-only content, read in
 * one place so that each gives the same answer: a value OpenAI allows but the
 * provider cannot express is a clear `invalid_request` naming the provider,
 * never a silent change of meaning (a grammar read as JSON mode, `n: 3`
 * answered with one choice) and never a crash on `null`. The shapes were
 * checked by protocol/validate.ts; OpenAI-compatible upstreams get the
 * client's values as sent.
 */
import type { ChatMessage, ChatRequest, FunctionTool, ResponseFormat } from '../protocol/openai.js';
import { UpstreamError } from '../resilience/upstream-error.js';

const invalid = (message: string, param: string): UpstreamError => new UpstreamError({ category: 'invalid_request', message, param, unsent: true });

export interface ToolSelection {
  /** none: no call; auto: the model decides; required: it must call one of `tools`. */
  mode: 'none' | 'auto' | 'required';
  /** The tools to offer: the request's, narrowed to an `allowed_tools` list. */
  tools: FunctionTool[];
  /** The one tool a `{type: "function"}` choice names (mode required): force it, or offer only it. */
  named?: string;
  /** The client chose (else the provider's default applies). */
  explicit: boolean;
}

/** The request's tools and how the model may use them; undefined when it offers none. */
export function toolSelection(req: ChatRequest, provider: string): ToolSelection | undefined {
  // Legacy `functions` reach an adapter as tools (legacy-functions.ts, around every native
  // adapter its factory builds): one built without that is refused them rather than dropping them.
  if (Array.isArray(req.functions) && req.functions.length > 0) {
    throw invalid(`functions (legacy function calling) are not supported by ${provider}: offer them as tools`, 'functions');
  }
  const tools = req.tools;
  if (!Array.isArray(tools) || tools.length === 0) {
    // 'none' and 'auto' without tools mean what no tools mean; a call required of no tools cannot be honoured (OpenAI refuses it too).
    const choice = req.tool_choice as unknown;
    if (choice === undefined || choice === null || choice === 'none' || choice === 'auto') return undefined;
    throw invalid('tool_choice requires a call, but the request offers no tools', 'tool_choice');
  }
  const other = tools.find((t) => t.type !== undefined && t.type !== 'function');
  if (other !== undefined) throw invalid(`tools of type "${String(other.type)}" are not supported by ${provider}`, 'tools');
  const choice = req.tool_choice as unknown;
  if (choice === undefined || choice === null) return { mode: 'auto', tools, explicit: false };
  if (choice === 'none' || choice === 'auto' || choice === 'required') return { mode: choice, tools, explicit: true };
  const c = choice as { type?: unknown; function?: { name?: unknown }; allowed_tools?: { mode?: unknown; tools?: { function?: { name?: unknown } }[] } };
  if (c.type === 'function' && typeof c.function?.name === 'string') {
    const named = c.function.name;
    if (!tools.some((t) => t.function.name === named)) throw invalid(`tool_choice names "${named}", which is not in tools`, 'tool_choice');
    return { mode: 'required', tools, named, explicit: true };
  }
  if (c.type === 'allowed_tools' && Array.isArray(c.allowed_tools?.tools)) {
    const allowed = new Set(c.allowed_tools.tools.map((t) => t?.function?.name));
    const offered = tools.filter((t) => allowed.has(t.function.name));
    if (offered.length === 0) throw invalid('tool_choice.allowed_tools names none of the tools', 'tool_choice');
    return { mode: c.allowed_tools.mode === 'required' ? 'required' : 'auto', tools: offered, explicit: true };
  }
  throw invalid(`tool_choice of type "${String(c.type)}" is not supported by ${provider}`, 'tool_choice');
}

/**
 * toolSelection, for providers that cannot combine tools with a JSON response
 * format (Gemini, Cohere): tools the client said not to use are left out when a
 * format is asked for, and tools it may use beside one are refused.
 */
export function toolsBesideJson(req: ChatRequest, provider: string): ToolSelection | undefined {
  const selection = toolSelection(req, provider);
  if (selection === undefined || responseFormat(req, provider) === undefined) return selection;
  if (selection.mode === 'none') return undefined;
  throw invalid(`${provider} cannot combine tools with a JSON response_format`, 'response_format');
}

/** The response format the provider can honour: text, JSON mode or a JSON schema; null is none. */
export function responseFormat(req: ChatRequest, provider: string): ResponseFormat | undefined {
  const f = req.response_format as ResponseFormat | null | undefined;
  if (f === undefined || f === null || f.type === 'text') return undefined;
  if (f.type === 'json_object') return f;
  if (f.type === 'json_schema') {
    const s = f.json_schema as unknown;
    if (s === null || typeof s !== 'object' || Array.isArray(s)) throw invalid('response_format.json_schema must be an object', 'response_format.json_schema');
    // Each adapter builds its provider's schema from it (or inlines it in an instruction): `true` or a string is none to build.
    const schema = (s as { schema?: unknown }).schema;
    if (schema !== undefined && schema !== null && (typeof schema !== 'object' || Array.isArray(schema))) {
      throw invalid('response_format.json_schema.schema must be a JSON Schema object', 'response_format.json_schema.schema');
    }
    return f;
  }
  throw invalid(`response_format type "${String(f.type)}" is not supported by ${provider}`, 'response_format');
}

/**
 * The request's stop sequences as a native provider takes them. An empty one is
 * dropped, as no provider stops on it usefully: Ollama's runner matches it at
 * once (an empty answer), Anthropic refuses it. More than the provider's
 * `max` (Gemini and Cohere take 5) is refused here, so another candidate can
 * serve, rather than sent to come back as a 400 that ends the request. Undefined
 * when none is left.
 */
export function stopSequences(req: ChatRequest, provider: string, max = Infinity): string[] | undefined {
  const stop = req.stop;
  if (stop === undefined || stop === null) return undefined;
  const out = (typeof stop === 'string' ? [stop] : stop).filter((s) => s.length > 0);
  if (out.length > max) throw invalid(`${provider} takes at most ${max} stop sequences`, 'stop');
  return out.length > 0 ? out : undefined;
}

/**
 * A native answer carries text and tool calls only: log probabilities or audio asked for
 * are refused, not answered without them (`logprobs: null`, a text reply to play). So is a
 * `logit_bias`: its keys are ids of OpenAI's tokenizer, which no native model shares, and
 * dropped, a token the client banned (-100) could appear in the answer; and a web search.
 */
export function textAnswer(req: ChatRequest, provider: string): void {
  if (req.logprobs === true) throw invalid(`logprobs are not supported by ${provider}`, 'logprobs');
  const bias = req.logit_bias;
  if (bias != null) for (const _ in bias) throw invalid(`logit_bias is not supported by ${provider} (its token ids are OpenAI's)`, 'logit_bias');
  // A search the client asked for, answered from the model's memory, would be an answer of another kind.
  if (req.web_search_options != null) throw invalid(`web_search_options is not supported by ${provider}`, 'web_search_options');
  const modalities = req.modalities;
  if (Array.isArray(modalities) && modalities.includes('audio')) throw invalid(`audio output is not supported by ${provider}`, 'modalities');
}

/** Roles whose content every native format takes as text only (OpenAI too: it refuses other parts there). */
export const TEXT_ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'assistant']);
/** …and tool results, for providers whose tool results carry text only (all but Anthropic). */
export const TEXT_AND_RESULT_ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'assistant', 'tool', 'function']);

/**
 * A part other than text (an image, a file) in a message whose content the provider takes
 * as text only is refused, naming it, rather than dropped. An assistant's refusal part,
 * which OpenAI takes there, is history the adapters leave out (nothing to continue from).
 */
export function textOnlyParts(messages: ChatMessage[], provider: string, roles: ReadonlySet<string>): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (!Array.isArray(m.content) || !roles.has(m.role)) continue;
    for (let j = 0; j < m.content.length; j++) {
      const type = m.content[j]!.type;
      if (type === 'text' || (type === 'refusal' && m.role === 'assistant')) continue;
      throw invalid(`${provider} takes only text in ${m.role} messages, not "${type}" parts`, `messages[${i}].content[${j}]`);
    }
  }
}

/** For providers that answer one choice a call: `n` > 1 is refused, not answered with one. */
export function oneChoice(req: ChatRequest, provider: string): void {
  if (typeof req.n === 'number' && req.n > 1) throw invalid(`n > 1 is not supported by ${provider}, which answers one choice a request`, 'n');
}

const EMPTY_OBJECT_SCHEMA: Readonly<Record<string, unknown>> = Object.freeze({ type: 'object', properties: {} });

/**
 * A tool's parameters as an object schema, which Anthropic, Cohere and Ollama
 * require (`type: "object"`): OpenAI takes `{}`, no parameters, or properties
 * without a type, all meaning an object.
 */
export function objectSchema(parameters: Record<string, unknown> | undefined): Record<string, unknown> {
  if (parameters === undefined || parameters === null || Object.keys(parameters).length === 0) return EMPTY_OBJECT_SCHEMA as Record<string, unknown>;
  return parameters.type === undefined ? { type: 'object', ...parameters } : parameters;
}

/**
 * OpenAI's legacy function calling in a conversation's history — an assistant
 * `function_call`, answered by a `function` message naming it — as the tool calls
 * and tool results every native format has: each call gets an id, and each result
 * the id of the earliest unanswered call of its name. (Gemini reads the legacy form
 * itself.) The messages come back as they were when there is none.
 */
export function withToolCallIds(messages: ChatMessage[]): ChatMessage[] {
  let legacy = false;
  for (const m of messages) if (m.role === 'function' || m.function_call != null) legacy = true;
  if (!legacy) return messages;
  const open = new Map<string, string[]>();
  return messages.map((m, i) => {
    const call = m.function_call as { name?: unknown; arguments?: unknown } | null | undefined;
    if (m.role === 'assistant' && call && typeof call.name === 'string') {
      const id = `call_legacy_${i}`;
      const ids = open.get(call.name) ?? [];
      ids.push(id);
      open.set(call.name, ids);
      const args = typeof call.arguments === 'string' ? call.arguments : '{}';
      return { ...m, function_call: undefined, tool_calls: [...(m.tool_calls ?? []), { id, type: 'function', function: { name: call.name, arguments: args } }] };
    }
    if (m.role === 'function' && typeof m.name === 'string') {
      const id = open.get(m.name)?.shift();
      if (id !== undefined) return { role: 'tool', tool_call_id: id, name: m.name, content: m.content };
    }
    return m;
  });
}
