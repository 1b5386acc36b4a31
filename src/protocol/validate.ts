/**
 * Request validation on the hot path: hand-written checks over the parsed JSON
 * (a schema library costs several times more per request here). They check the
 * shape the gateway relies on, and the values of OpenAI's fields that OpenAI
 * itself refuses with 400 (which a lenient upstream or a native adapter would
 * otherwise answer with 200), and leave unknown fields to the upstream.
 */
import { invalidRequest } from '../core/errors.js';
import { badName, isName, isObj, optNumber } from './field-checks.js';
import type { ChatRequest, EmbeddingsRequest } from './openai.js';
import { checkChatOptions } from './validate-options.js';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** Adapters and token estimates read `function.name` / `function.arguments` of every call. */
function checkToolCalls(calls: unknown, i: number, role: string): void {
  const param = `messages[${i}].tool_calls`;
  if (role !== 'assistant') throw invalidRequest(`${param} is only allowed on assistant messages`, param);
  if (!Array.isArray(calls)) throw invalidRequest(`${param} must be an array`, param);
  for (let t = 0; t < calls.length; t++) {
    const c = calls[t];
    if (!isObj(c) || !isObj(c.function) || typeof c.function.name !== 'string' || typeof c.function.arguments !== 'string') {
      throw invalidRequest(`${param}[${t}] must be {id, type: 'function', function: {name, arguments}} with string name and arguments`, `${param}[${t}]`);
    }
    // Adapters map ids as strings (Anthropic rewrites them to its alphabet); OpenAI refuses any other type too.
    if (c.id !== undefined && c.id !== null && typeof c.id !== 'string') throw invalidRequest(`${param}[${t}].id must be a string`, `${param}[${t}].id`);
  }
}

function checkContent(content: unknown, i: number, role: string): void {
  if (typeof content === 'string') return;
  if (content === null || content === undefined) {
    // A legacy function result may be null too, as OpenAI takes it ({role: 'function', name, content: null}).
    if (role === 'assistant' || (role === 'function' && content === null)) return;
    throw invalidRequest(`messages[${i}].content is required for role '${role}'`, `messages[${i}].content`);
  }
  if (!Array.isArray(content)) throw invalidRequest(`messages[${i}].content must be a string or an array of parts`, `messages[${i}].content`);
  for (let p = 0; p < content.length; p++) {
    const part = content[p];
    const param = `messages[${i}].content[${p}]`;
    if (!isObj(part) || typeof part.type !== 'string') throw invalidRequest(`${param} must be an object with a 'type'`, param);
    if (part.type === 'text' && typeof part.text !== 'string') throw invalidRequest(`${param}.text must be a string`, `${param}.text`);
    if (part.type === 'image_url' && !(isObj(part.image_url) && typeof part.image_url.url === 'string')) {
      throw invalidRequest(`${param}.image_url.url must be a string`, `${param}.image_url`);
    }
  }
}

/** A function's description and parameters, in `tools[t].function` or legacy `functions[t]`. */
function checkFunctionTool(fn: Record<string, unknown>, t: number, legacy = false): void {
  const where = (field: string) => (legacy ? `functions[${t}].${field}` : `tools[${t}].function.${field}`);
  const parameters = fn.parameters;
  if (parameters !== undefined && parameters !== null && !isObj(parameters)) {
    throw invalidRequest(`${where('parameters')} must be a JSON Schema object`, where('parameters'));
  }
  const description = fn.description;
  if (description !== undefined && description !== null && typeof description !== 'string') {
    throw invalidRequest(`${where('description')} must be a string`, where('description'));
  }
}

/**
 * Function tools and custom tools (free-form input; OpenAI-compatible upstreams take
 * them, native adapters refuse them). OpenAI requires the `type` ("Missing required
 * parameter: 'tools[0].type'") and a function name of its alphabet.
 */
function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw invalidRequest("'tools' must be an array", 'tools');
  for (let t = 0; t < tools.length; t++) {
    const tool = tools[t];
    if (!isObj(tool)) throw badTool(t);
    const type = tool.type;
    if (type === 'custom') {
      if (isObj(tool.custom) && typeof tool.custom.name === 'string') continue;
      throw badTool(t);
    }
    if (type !== 'function') throw invalidRequest(`tools[${t}].type must be 'function' or 'custom'`, `tools[${t}].type`);
    if (!isObj(tool.function) || typeof tool.function.name !== 'string') throw badTool(t);
    if (!isName(tool.function.name)) throw badName(`tools[${t}].function.name`);
    // Native adapters build the provider's schema from these: a string or an array there is no schema to build from.
    checkFunctionTool(tool.function, t);
  }
}

const badTool = (t: number) =>
  invalidRequest(`tools[${t}] must be {type: 'function', function: {name, ...}} or {type: 'custom', custom: {name, ...}}`, `tools[${t}]`);

/** Legacy function calling: native adapters offer `functions` as tools, so they are checked as tools are. */
function checkFunctions(functions: unknown): void {
  if (!Array.isArray(functions)) throw invalidRequest("'functions' must be an array", 'functions');
  for (let f = 0; f < functions.length; f++) {
    const fn = functions[f];
    if (!isObj(fn) || typeof fn.name !== 'string') throw invalidRequest(`functions[${f}] must be {name, description?, parameters?} with a string name`, `functions[${f}]`);
    if (!isName(fn.name)) throw badName(`functions[${f}].name`);
    checkFunctionTool(fn, f, true);
  }
}

function checkFunctionCall(call: unknown): void {
  if (call === 'none' || call === 'auto' || (isObj(call) && typeof call.name === 'string')) return;
  throw invalidRequest("'function_call' must be 'none', 'auto' or {name}", 'function_call');
}

const TOOL_CHOICE_MODES = new Set(['none', 'auto', 'required']);
const hasFunctionName = (v: unknown): boolean => isObj(v) && isObj(v.function) && typeof v.function.name === 'string';

/** `tool_choice`: a mode, one named function, or an allowed_tools list (as OpenAI takes them); adapters read the named function's name. */
function checkToolChoice(choice: unknown): void {
  if (choice === undefined || choice === null) return;
  if (typeof choice === 'string' && TOOL_CHOICE_MODES.has(choice)) return;
  if (isObj(choice)) {
    if (choice.type === 'function' && hasFunctionName(choice)) return;
    const a = choice.allowed_tools;
    if (choice.type === 'allowed_tools' && isObj(a) && (a.mode === 'auto' || a.mode === 'required') && Array.isArray(a.tools) && a.tools.every(hasFunctionName)) return;
    if (choice.type === 'custom' && isObj(choice.custom) && typeof choice.custom.name === 'string') return;
  }
  throw invalidRequest(
    "'tool_choice' must be 'none', 'auto', 'required', {type: 'function', function: {name}} or {type: 'allowed_tools', allowed_tools: {mode, tools}}",
    'tool_choice',
  );
}

/**
 * No model name is longer: a longer one is no name but a way to make the gateway keep
 * big strings (it is traced, logged, and interned by the trace store).
 */
export const MAX_MODEL_CHARS = 256;
/** OpenAI's cap on the items of one embeddings request (a token array is one item). */
export const MAX_EMBEDDING_INPUTS = 2048;

function checkModel(model: unknown): void {
  if (typeof model !== 'string' || model.length === 0) throw invalidRequest("'model' is required and must be a string", 'model');
  if (model.length > MAX_MODEL_CHARS) throw invalidRequest(`'model' must be at most ${MAX_MODEL_CHARS} characters`, 'model');
}

export function validateChatRequest(body: unknown): ChatRequest {
  if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
  checkModel(body.model);
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalidRequest("'messages' must be a non-empty array", 'messages');
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m)) throw invalidRequest(`messages[${i}] must be an object`, `messages[${i}]`);
    const role = m.role;
    if (typeof role !== 'string' || !ROLES.has(role)) throw invalidRequest(`messages[${i}].role must be one of ${[...ROLES].join(', ')}`, `messages[${i}].role`);
    if (m.tool_calls !== undefined && m.tool_calls !== null) checkToolCalls(m.tool_calls, i, role);
    if (role === 'tool' && typeof m.tool_call_id !== 'string') throw invalidRequest(`messages[${i}].tool_call_id is required for role 'tool'`, `messages[${i}].tool_call_id`);
    checkContent(m.content, i, role);
  }
  checkChatOptions(body);
  if (body.tools !== undefined && body.tools !== null) checkTools(body.tools);
  if (body.functions !== undefined && body.functions !== null) checkFunctions(body.functions);
  if (body.function_call !== undefined && body.function_call !== null) checkFunctionCall(body.function_call);
  checkToolChoice(body.tool_choice);
  return body as unknown as ChatRequest;
}

export function validateEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (!isObj(body)) throw invalidRequest('request body must be a JSON object');
  checkModel(body.model);
  const input = body.input;
  const ok =
    (typeof input === 'string' && input.length > 0) ||
    (Array.isArray(input) &&
      input.length > 0 &&
      // No item may be empty, as OpenAI refuses `[""]` and `[[]]` as it refuses `""`: nothing to embed.
      (input.every((x) => typeof x === 'string' && x.length > 0) ||
        input.every((x) => typeof x === 'number' && Number.isInteger(x)) ||
        input.every((x) => Array.isArray(x) && x.length > 0 && x.every((y) => typeof y === 'number' && Number.isInteger(y)))));
  if (!ok) throw invalidRequest("'input' must be a non-empty string, array of non-empty strings, or token arrays", 'input');
  if (Array.isArray(input) && input.length > MAX_EMBEDDING_INPUTS && typeof input[0] !== 'number') {
    throw invalidRequest(`'input' may hold at most ${MAX_EMBEDDING_INPUTS} items`, 'input');
  }
  optNumber(body.dimensions, 'dimensions', 1, 100_000, true);
  const encoding = body.encoding_format;
  if (encoding !== undefined && encoding !== null && encoding !== 'float' && encoding !== 'base64') {
    throw invalidRequest("'encoding_format' must be 'float' or 'base64'", 'encoding_format');
  }
  return body as unknown as EmbeddingsRequest;
}
