/**
 * OpenAI ChatRequest → Anthropic Messages request. Pure.
 *
 * What Anthropic needs that OpenAI does not:
 * - `system` is a top-level field, not a message: system and developer messages
 *   are hoisted there, joined by blank lines, wherever they stood.
 * - Roles alternate user/assistant: consecutive same-role messages are merged
 *   into one message's content blocks, and `tool` results travel as user
 *   `tool_result` blocks (so parallel results merge into one user turn).
 * - `max_tokens` is required: the client's value, else DEFAULT_MAX_TOKENS.
 * - Empty or whitespace-only text blocks are rejected, so they are dropped.
 * - A final assistant message is a prefill that Anthropic continues (stream
 *   resume relies on it), but it may not end in whitespace: the whitespace is
 *   trimmed and returned as `prefillTrim`, so the response converters can drop
 *   it again from the continuation's start (the client already has it).
 *
 * `response_format` has no Anthropic equivalent: json_object and json_schema
 * become an instruction appended to the system prompt (with the schema
 * inlined). `n` > 1, logprobs and audio output, which an Anthropic answer
 * cannot carry, are refused; seed and penalties, hints with no equivalent, are ignored.
 * Temperature is clamped to Anthropic's 0..1 range rather than failing, and
 * only one of temperature and top_p goes out, which newer models require (see
 * below). A whitespace-only stop sequence, which
 * Anthropic refuses, is refused for this candidate. Tool ids are made unique
 * in the conversation, as Anthropic requires (see ToolIds).
 * API version 2026-10-21 removed temperature/top_p (a 400 if sent): with
 * `sampling: false` they are left out.
 *
 * `reasoning_effort` becomes extended thinking (thinking.ts says how, and when it cannot).
 *
 * Prompt-cache breakpoints (`cache_control`) go out where the client put them:
 * on a part, on a message (its last block), on a tool. A system prompt with one
 * goes out as blocks, one a system message's text (each part its own block when
 * one of them is marked); without, as one string, as before.
 */
import type { ChatMessage, ChatRequest, ResponseFormat, TextPart } from '../../protocol/openai.js';
import { cacheControlOf, contentBlocks, markLast, marked, plainText, pushText, unsupported } from './convert-content.js';
import { objectSchema, oneChoice, responseFormat, stopSequences, textAnswer, textOnlyParts, TEXT_ROLES, toolSelection, withToolCallIds, type ToolSelection } from '../request-options.js';
import { reasoningEffortOf } from '../reasoning-effort.js';
import { parseClientJson } from '../client-json.js';
import { appendAll } from '../append-all.js';
import { applyThinking } from './thinking.js';
import type {
  AnthropicCacheControl,
  AnthropicContentBlock,
  AnthropicMessageParam,
  AnthropicRequest,
  AnthropicTextBlock,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
} from './wire.js';

/** Sent when the client gives no max_tokens (Anthropic requires one). */
export const DEFAULT_MAX_TOKENS = 4096;

export interface ConvertOptions {
  /** Send temperature and top_p (anthropic-version 2023-06-01); default true. */
  sampling?: boolean;
}

export interface ConvertedRequest {
  body: AnthropicRequest;
  /** Whitespace trimmed off the end of a final assistant prefill ('' if none). */
  prefillTrim: string;
}

interface Turn {
  role: 'user' | 'assistant';
  blocks: AnthropicContentBlock[];
}

export function toAnthropicRequest(
  req: ChatRequest,
  model: string,
  stream: boolean,
  opts: ConvertOptions = {},
): ConvertedRequest {
  const system: AnthropicTextBlock[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn['role'], blocks: AnthropicContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) appendAll(last.blocks, blocks);
    else turns.push({ role, blocks });
  };

  const toolIds = new ToolIds();
  textOnlyParts(req.messages, 'anthropic', TEXT_ROLES);
  const messages = withToolCallIds(req.messages);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const cache = cacheControlOf(m.cache_control, `messages[${i}]`);
    switch (m.role) {
      case 'system':
      case 'developer':
        systemBlocks(system, m, i, cache);
        break;
      case 'user':
      case 'function': // legacy function results carry no call id: plain user text
        push('user', withMark(contentBlocks(m.content, `messages[${i}].content`), cache));
        break;
      case 'assistant':
        push('assistant', withMark(assistantBlocks(m, i, toolIds), cache));
        break;
      case 'tool':
        push('user', [marked(toolResult(m, i, toolIds), cache)]);
        break;
      default:
        throw unsupported(`message role "${String(m.role)}"`, `messages[${i}].role`);
    }
  }

  if (turns.length === 0) {
    // Anthropic needs a message: a system-only request still deserves an answer (as for Gemini);
    // one with no text at all is refused here rather than by the provider in other words.
    if (system.length === 0) throw unsupported('a request whose messages hold no text', 'messages');
    const blocks = system.splice(0);
    turns.push({ role: 'user', blocks: isMarked(blocks) ? blocks : [{ type: 'text', text: joined(blocks) }] });
  }
  const prefillTrim = trimFinalAssistant(turns);
  oneChoice(req, 'anthropic');
  textAnswer(req, 'anthropic');
  const formatInstruction = responseFormatInstruction(responseFormat(req, 'anthropic'));
  if (formatInstruction) system.push({ type: 'text', text: formatInstruction });

  const clientMax = req.max_completion_tokens ?? req.max_tokens ?? undefined;
  const body: AnthropicRequest = {
    model,
    max_tokens: clientMax ?? DEFAULT_MAX_TOKENS,
    messages: turns.map(toMessageParam),
  };
  if (system.length > 0) body.system = isMarked(system) ? system : joined(system);
  if (opts.sampling !== false) {
    // Claude models since Sonnet 4.5 refuse temperature and top_p together (a 400), and
    // Anthropic advises altering one, never both, on every model. So one goes out: top_p
    // when the temperature is the default both APIs share (1, so it changes nothing),
    // else the temperature — as Portkey does. OpenAI clients often send `top_p: 1` beside one.
    const temperature = typeof req.temperature === 'number' ? Math.min(1, Math.max(0, req.temperature)) : undefined;
    const topP = typeof req.top_p === 'number' ? req.top_p : undefined;
    if (temperature !== undefined && !(temperature === 1 && topP !== undefined && topP < 1)) body.temperature = temperature;
    else if (topP !== undefined) body.top_p = topP;
  }
  const stop = stopSequences(req, 'anthropic');
  // Anthropic refuses a stop sequence of whitespace only ("\n"): refused here, so another
  // candidate can serve the request, rather than sent to come back as a 400.
  if (stop?.some((s) => s.trim() === '')) {
    throw unsupported('a stop sequence of whitespace only (such as "\\n")', 'stop');
  }
  if (stop) body.stop_sequences = stop;
  if (typeof req.user === 'string' && req.user) body.metadata = { user_id: req.user };
  const selection = toolSelection(req, 'anthropic');
  if (selection) {
    body.tools = selection.tools.map((t) => {
      const tool: NonNullable<AnthropicRequest['tools']>[number] = { name: t.function.name, input_schema: objectSchema(t.function.parameters) };
      if (t.function.description) tool.description = t.function.description;
      return marked(tool, cacheControlOf((t as { cache_control?: unknown }).cache_control, 'tools'));
    });
    const choice = toolChoice(selection, req.parallel_tool_calls === false);
    if (choice) body.tool_choice = choice;
  } else {
    // Anthropic refuses tool_use blocks in a conversation that defines no tools (history
    // from a turn that offered them): declare the tools used, and forbid new calls.
    const used = toolsUsed(turns);
    if (used.length > 0) {
      body.tools = used.map((name) => ({ name, input_schema: objectSchema(undefined) }));
      body.tool_choice = { type: 'none' };
    }
  }
  if (stream) body.stream = true;
  // Last: it reads the converted turns and tool choice, and drops the sampling set above.
  const effort = reasoningEffortOf(req);
  if (effort !== undefined) applyThinking(body, effort, model, clientMax, DEFAULT_MAX_TOKENS);
  if (breakpoints(body) > MAX_CACHE_BREAKPOINTS) {
    throw unsupported(`more than ${MAX_CACHE_BREAKPOINTS} cache_control breakpoints in one request`, 'messages');
  }
  return { body, prefillTrim };
}

/** Anthropic refuses a request with more prompt-cache breakpoints than this. */
const MAX_CACHE_BREAKPOINTS = 4;

function breakpoints(body: AnthropicRequest): number {
  let n = 0;
  const count = (blocks: readonly { cache_control?: unknown; content?: unknown }[]): void => {
    for (const b of blocks) {
      if (b.cache_control !== undefined) n++;
      if (Array.isArray(b.content)) count(b.content as { cache_control?: unknown }[]);
    }
  };
  if (Array.isArray(body.system)) count(body.system);
  for (const m of body.messages) if (Array.isArray(m.content)) count(m.content);
  if (body.tools) count(body.tools);
  return n;
}

/** A system or developer message's text: one block (its parts joined), or a block a part when one of them is a breakpoint. */
function systemBlocks(system: AnthropicTextBlock[], m: ChatMessage, i: number, cache: AnthropicCacheControl | undefined): void {
  const from = system.length;
  const parts = Array.isArray(m.content) ? m.content : undefined;
  if (parts?.some((p) => (p as { cache_control?: unknown }).cache_control != null)) {
    for (let j = 0; j < parts.length; j++) {
      const p = parts[j]!;
      if (p.type === 'text') pushText(system, (p as TextPart).text, cacheControlOf((p as { cache_control?: unknown }).cache_control, `messages[${i}].content[${j}]`));
    }
  } else {
    const text = plainText(m.content);
    if (text.trim()) system.push({ type: 'text', text });
  }
  markLast(system.slice(from), cache);
}

const isMarked = (blocks: readonly AnthropicTextBlock[]): boolean => blocks.some((b) => b.cache_control !== undefined);
const joined = (blocks: readonly AnthropicTextBlock[]): string => blocks.map((b) => b.text).join('\n\n');

/** `blocks`, the last one marked when the message carries a breakpoint. */
function withMark<B extends AnthropicContentBlock>(blocks: B[], cache: AnthropicCacheControl | undefined): B[] {
  markLast(blocks, cache);
  return blocks;
}

function toMessageParam(t: Turn): AnthropicMessageParam {
  // One plain text block reads best (and matches Anthropic's own examples) as a string; a marked one stays a block.
  const only = t.blocks.length === 1 ? t.blocks[0]! : undefined;
  return { role: t.role, content: only?.type === 'text' && only.cache_control === undefined ? only.text : t.blocks };
}

function toolChoice(sel: ToolSelection, noParallel: boolean): AnthropicToolChoice | undefined {
  const np = noParallel ? { disable_parallel_tool_use: true } : {};
  if (!sel.explicit) return noParallel ? { type: 'auto', ...np } : undefined;
  if (sel.mode === 'none') return { type: 'none' };
  if (sel.mode === 'auto') return { type: 'auto', ...np };
  if (sel.named !== undefined) return { type: 'tool', name: sel.named, ...np };
  return { type: 'any', ...np };
}

/** Drop trailing whitespace of a final assistant prefill; returns what was dropped. */
function trimFinalAssistant(turns: Turn[]): string {
  const last = turns[turns.length - 1];
  if (last === undefined || last.role !== 'assistant') return '';
  const block = last.blocks[last.blocks.length - 1];
  if (block === undefined || block.type !== 'text') return '';
  // trimEnd, not /\s+$/ (the same whitespace): the regex is tried from every position of a
  // whitespace run and backtracks each time, so a prefill of 1M spaces then a letter (in a
  // 4 MB body) held the event loop for minutes.
  const trimmed = block.text.trimEnd();
  const dropped = block.text.slice(trimmed.length);
  // Non-final blocks were already filtered for blankness, so this one has text.
  block.text = trimmed;
  return dropped;
}

function assistantBlocks(m: ChatMessage, i: number, toolIds: ToolIds): AnthropicContentBlock[] {
  const blocks: AnthropicContentBlock[] = [];
  if (typeof m.content === 'string') pushText(blocks, m.content);
  else if (Array.isArray(m.content)) {
    // Assistant parts are text or refusal; a refusal is not something to continue from.
    m.content.forEach((p, j) => {
      if (p.type === 'text') pushText(blocks, (p as TextPart).text, cacheControlOf((p as { cache_control?: unknown }).cache_control, `messages[${i}].content[${j}]`));
    });
  }
  const calls = m.tool_calls ?? [];
  for (let k = 0; k < calls.length; k++) {
    const call = calls[k]!;
    const block: AnthropicToolUseBlock = {
      type: 'tool_use',
      id: toolIds.call(call.id),
      name: call.function.name,
      input: parseArguments(call.function.arguments, `messages[${i}].tool_calls[${k}].function.arguments`),
    };
    blocks.push(block);
  }
  return blocks;
}

/**
 * Tool input must be a JSON object; anything unparsable becomes `{}` rather than failing the
 * turn. Input nested past a request body's bound is refused (client-json.ts).
 */
function parseArguments(args: string, param: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = parseClientJson(args, param);
  } catch (err) {
    if (err instanceof SyntaxError) return {};
    throw err;
  }
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Anthropic takes tool ids of `[a-zA-Z0-9_-]` only, each id once in the whole
 * conversation: other servers' ids (`functions.get_weather:0`) are mapped alike
 * in a call and its result, one request's ids kept apart (`a.b` and `a:b` must
 * not both become `a_b`), and an id a history repeats (servers that number
 * calls per answer, `call_0` in every turn) gets a new one each time it is
 * called, its results answering the earliest call of that id not yet answered.
 */
class ToolIds {
  private readonly taken = new Set<string>();
  /** Per client id: the ids its calls went out as, oldest first, not yet answered. */
  private readonly open = new Map<string, string[]>();
  /** Per client id: the id of its latest call (a result with no open call reuses it). */
  private readonly latest = new Map<string, string>();
  /**
   * Per sanitized base: the suffix to try next. Counting up from 2 on every call made
   * an id repeated n times cost n² set lookups: one request of 30,000 calls sharing
   * an id (under the default body limit) held the event loop for over a minute.
   */
  private readonly nextSuffix = new Map<string, number>();

  call(id: string | undefined): string {
    const key = id ?? '';
    const safe = this.fresh(key);
    const open = this.open.get(key);
    if (open) open.push(safe);
    else this.open.set(key, [safe]);
    this.latest.set(key, safe);
    return safe;
  }

  /** The id a result goes out with; undefined when no call before it has its id (Anthropic refuses such a result). */
  result(id: string | undefined): string | undefined {
    const key = id ?? '';
    return this.open.get(key)?.shift() ?? this.latest.get(key);
  }

  private fresh(key: string): string {
    const base = key.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';
    let safe = base;
    if (this.taken.has(safe)) {
      let n = this.nextSuffix.get(base) ?? 2;
      while (this.taken.has((safe = `${base}_${n}`))) n++;
      this.nextSuffix.set(base, n + 1);
    }
    this.taken.add(safe);
    return safe;
  }
}

/** Names of the tools the conversation's history called. */
function toolsUsed(turns: Turn[]): string[] {
  const names = new Set<string>();
  for (const t of turns) for (const b of t.blocks) if (b.type === 'tool_use') names.add(b.name);
  return [...names];
}

function toolResult(m: ChatMessage, i: number, toolIds: ToolIds): AnthropicToolResultBlock {
  const id = toolIds.result(m.tool_call_id);
  if (id === undefined) throw unsupported('a tool result whose tool_call_id answers no tool call before it', `messages[${i}].tool_call_id`);
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: id };
  if (typeof m.content === 'string') {
    if (m.content) block.content = m.content;
  } else if (Array.isArray(m.content)) {
    // Text, images and documents (a PDF a tool returned), as a tool result takes them.
    const parts = contentBlocks(m.content, `messages[${i}].content`);
    const only = parts.length === 1 ? parts[0]! : undefined;
    if (only?.type === 'text' && only.cache_control === undefined) block.content = only.text;
    else if (parts.length > 0) block.content = parts;
  }
  return block;
}

function responseFormatInstruction(format: ResponseFormat | undefined): string | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') {
    return 'Respond with a single valid JSON object and nothing else: no prose, no code fences.';
  }
  const schema = format.json_schema?.schema;
  if (schema === undefined) return 'Respond with valid JSON and nothing else: no prose, no code fences.';
  return (
    'Respond with a single JSON value that conforms to this JSON Schema, and nothing else ' +
    `(no prose, no code fences):\n${JSON.stringify(schema)}`
  );
}
