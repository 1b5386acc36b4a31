/**
 * OpenAI chat request → Ollama `/api/chat` body. Pure; throws an
 * `invalid_request` UpstreamError for what Ollama cannot take (image URLs:
 * Ollama wants the bytes, and the gateway does not fetch on a client's behalf).
 */
import type { ChatMessage, ChatRequest, FunctionTool, ResponseFormat } from '../../protocol/openai.js';
import { contentText } from '../content-text.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import type { OllamaChatRequest, OllamaMessage, OllamaOptions, OllamaTool, OllamaToolCall } from './wire.js';
import { parseDataUrl } from '../../protocol/data-url.js';
import { reasoningEffortOf } from '../reasoning-effort.js';
import { parseClientJson } from '../client-json.js';
import { ollamaThinkOf } from './think.js';
import { objectSchema, oneChoice, responseFormat, stopSequences, textAnswer, textOnlyParts, TEXT_AND_RESULT_ROLES, toolSelection, withToolCallIds } from '../request-options.js';

/** `think`: false when the model refused `think` (think.ts), which is then left out. */
export function toOllamaRequest(req: ChatRequest, model: string, stream: boolean, think = true): OllamaChatRequest {
  // Ollama tool results name their tool; OpenAI's carry only the call id.
  const toolNames = new Map<string, string>();
  textOnlyParts(req.messages, 'ollama', TEXT_AND_RESULT_ROLES);
  const messages = withToolCallIds(req.messages).map((m, i) => toOllamaMessage(m, i, toolNames));
  const out: OllamaChatRequest = { model, messages, stream };

  oneChoice(req, 'ollama');
  textAnswer(req, 'ollama');
  const selection = toolSelection(req, 'ollama');
  // Ollama has no tool_choice: "none" is honoured by not offering tools, a named
  // tool by offering only that one; "required" cannot be enforced.
  if (selection && selection.mode !== 'none') {
    const tools = selection.named !== undefined ? selection.tools.filter((t) => t.function.name === selection.named) : selection.tools;
    out.tools = tools.map(toOllamaTool);
  }

  const format = toOllamaFormat(responseFormat(req, 'ollama'));
  if (format !== undefined) out.format = format;

  const options = toOllamaOptions(req);
  if (options) out.options = options;
  const effort = reasoningEffortOf(req);
  if (effort !== undefined && think) out.think = ollamaThinkOf(effort, model);
  return out;
}

function toOllamaOptions(req: ChatRequest): OllamaOptions | undefined {
  const o: OllamaOptions = {};
  if (req.temperature != null) o.temperature = req.temperature;
  if (req.top_p != null) o.top_p = req.top_p;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) o.num_predict = maxTokens;
  const stop = stopSequences(req, 'ollama');
  if (stop) o.stop = stop;
  if (req.seed != null) o.seed = req.seed;
  if (req.presence_penalty != null) o.presence_penalty = req.presence_penalty;
  if (req.frequency_penalty != null) o.frequency_penalty = req.frequency_penalty;
  return Object.keys(o).length > 0 ? o : undefined;
}

function toOllamaMessage(m: ChatMessage, i: number, toolNames: Map<string, string>): OllamaMessage {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: contentText(m.content) };
    case 'user': {
      if (typeof m.content === 'string') return { role: 'user', content: m.content };
      let content = '';
      let images: string[] | undefined;
      const parts = m.content ?? [];
      for (let j = 0; j < parts.length; j++) {
        const p = parts[j]!;
        if (p.type === 'text') content += (p as { text: string }).text;
        else if (p.type === 'image_url') (images ??= []).push(base64Image((p as { image_url: { url: string } }).image_url.url, `messages[${i}].content[${j}]`));
        else throw invalid(`ollama does not support "${p.type}" content parts`, `messages[${i}].content[${j}]`);
      }
      return images ? { role: 'user', content, images } : { role: 'user', content };
    }
    case 'assistant': {
      const msg: OllamaMessage = { role: 'assistant', content: contentText(m.content) };
      if (m.tool_calls && m.tool_calls.length > 0) {
        msg.tool_calls = m.tool_calls.map((c, index): OllamaToolCall => {
          toolNames.set(c.id, c.function.name);
          return { id: c.id, function: { index, name: c.function.name, arguments: parseArguments(c.function.arguments, `messages[${i}].tool_calls[${index}].function.arguments`) } };
        });
      }
      return msg;
    }
    case 'tool':
    case 'function': {
      const id = m.tool_call_id ?? '';
      const name = m.role === 'function' ? m.name : toolNames.get(id) ?? m.name;
      const msg: OllamaMessage = { role: 'tool', content: contentText(m.content) };
      if (name) msg.tool_name = name;
      if (id) msg.tool_call_id = id;
      return msg;
    }
    default:
      throw invalid(`ollama does not support messages with role "${String(m.role)}"`, `messages[${i}].role`);
  }
}

/** `data:image/png;base64,AAAA` → `AAAA` (a percent-encoded data URL is base64-encoded). Anything else cannot reach Ollama. */
export function base64Image(url: string, param: string): string {
  if (/^data:/i.test(url)) {
    const d = parseDataUrl(url);
    if (d !== undefined) return d.base64;
    throw invalid('ollama needs images as data URLs (data:image/...;base64,...)', param);
  }
  throw invalid('ollama does not fetch image URLs: send the image inline as a base64 data URL (data:image/...;base64,...)', param);
}

function parseArguments(args: string, param: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  let value: unknown;
  try {
    value = parseClientJson(args, param);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw invalid('ollama needs tool-call arguments that are a JSON object; got invalid JSON', param);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('ollama needs tool-call arguments that are a JSON object', param);
  }
  return value as Record<string, unknown>;
}

function toOllamaTool(t: FunctionTool): OllamaTool {
  const fn: OllamaTool['function'] = { name: t.function.name };
  if (t.function.description) fn.description = t.function.description;
  fn.parameters = objectSchema(t.function.parameters);
  return { type: 'function', function: fn };
}

function toOllamaFormat(f: ResponseFormat | undefined): OllamaChatRequest['format'] {
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_schema' && f.json_schema?.schema) return f.json_schema.schema;
  return 'json';
}

function invalid(message: string, param: string): UpstreamError {
  return new UpstreamError({ category: 'invalid_request', message, param, unsent: true });
}
