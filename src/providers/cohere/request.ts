/**
 * OpenAI chat request → Cohere v2 `/v2/chat` body. Pure; throws an
 * `invalid_request` UpstreamError for what Cohere cannot express.
 */
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ResponseFormat } from '../../protocol/openai.js';
import { contentText } from '../content-text.js';
import { UpstreamError } from '../../resilience/upstream-error.js';
import { objectSchema, oneChoice, responseFormat, stopSequences, textAnswer, textOnlyParts, TEXT_AND_RESULT_ROLES, toolsBesideJson, withToolCallIds } from '../request-options.js';
import { reasoningEffortOf } from '../reasoning-effort.js';
import { cohereThinkingOf, withAnswerRoom } from './thinking.js';
import type {
  CohereChatRequest,
  CohereImageContent,
  CohereMessage,
  CohereResponseFormat,
  CohereTextContent,
  CohereTool,
} from './wire.js';


export function toCohereRequest(req: ChatRequest, model: string, stream: boolean): CohereChatRequest {
  textOnlyParts(req.messages, 'cohere', TEXT_AND_RESULT_ROLES);
  const out: CohereChatRequest = { model, messages: withToolCallIds(req.messages).map((m, i) => toCohereMessage(m, i)), stream };

  oneChoice(req, 'cohere');
  textAnswer(req, 'cohere');
  const selection = toolsBesideJson(req, 'cohere');
  if (selection) {
    // Cohere cannot force one named tool: offer only that tool, and require a call.
    const tools = selection.named !== undefined ? selection.tools.filter((t) => t.function.name === selection.named) : selection.tools;
    if (selection.mode === 'required') out.tool_choice = 'REQUIRED';
    else if (selection.mode === 'none') out.tool_choice = 'NONE';
    out.tools = tools.map(toCohereTool);
    if (tools.some((t) => t.function.strict === true)) out.strict_tools = true;
  }

  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) out.max_tokens = maxTokens;
  if (req.temperature != null) out.temperature = req.temperature;
  // Cohere's ranges are narrower than OpenAI's: p 0.01–0.99, penalties 0–1. Clamped, as
  // Anthropic's temperature is: the nearest setting the provider has, not a refusal.
  if (req.top_p != null) out.p = clamp(req.top_p, 0.01, 0.99);
  const stop = stopSequences(req, 'cohere', 5);
  if (stop) out.stop_sequences = stop;
  if (req.seed != null) out.seed = req.seed;
  if (typeof req.frequency_penalty === 'number') out.frequency_penalty = clamp(req.frequency_penalty, 0, 1);
  if (typeof req.presence_penalty === 'number') out.presence_penalty = clamp(req.presence_penalty, 0, 1);
  const format = toCohereResponseFormat(responseFormat(req, 'cohere'));
  if (format) out.response_format = format;
  const effort = reasoningEffortOf(req);
  const thinking = effort === undefined ? undefined : cohereThinkingOf(effort, model);
  if (thinking && out.max_tokens !== undefined) {
    const fitted = withAnswerRoom(thinking, out.max_tokens);
    out.thinking = fitted.thinking;
    out.max_tokens = fitted.maxTokens;
  } else if (thinking) out.thinking = thinking;
  return out;
}

function toCohereMessage(m: ChatMessage, i: number): CohereMessage {
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: contentText(m.content) };
    case 'user':
      return { role: 'user', content: typeof m.content === 'string' ? m.content : userParts(m.content, i) };
    case 'assistant': {
      const msg: CohereMessage & { role: 'assistant' } = { role: 'assistant' };
      const text = contentText(m.content);
      if (m.tool_calls && m.tool_calls.length > 0) {
        msg.tool_calls = m.tool_calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.function.name, arguments: c.function.arguments },
        }));
        // Text beside tool calls is the model's plan in Cohere's terms.
        if (text) msg.tool_plan = text;
      } else {
        msg.content = text;
      }
      return msg;
    }
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: contentText(m.content) };
    case 'function':
      // Legacy OpenAI function results: the function name is the only link to the call.
      return { role: 'tool', tool_call_id: m.name ?? '', content: contentText(m.content) };
    default:
      throw invalid(`cohere does not support messages with role "${String(m.role)}"`, `messages[${i}].role`);
  }
}

function userParts(content: ContentPart[] | null | undefined, i: number): (CohereTextContent | CohereImageContent)[] {
  if (!content) return [];
  return content.map((p, j): CohereTextContent | CohereImageContent => {
    if (p.type === 'text') return { type: 'text', text: (p as { text: string }).text };
    if (p.type === 'image_url') {
      const image = (p as { image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }).image_url;
      return { type: 'image_url', image_url: image.detail ? { url: image.url, detail: image.detail } : { url: image.url } };
    }
    throw invalid(`cohere does not support "${p.type}" content parts`, `messages[${i}].content[${j}]`);
  });
}

function toCohereTool(t: FunctionTool): CohereTool {
  const fn: CohereTool['function'] = { name: t.function.name, parameters: objectSchema(t.function.parameters) };
  if (t.function.description) fn.description = t.function.description;
  return { type: 'function', function: fn };
}

function toCohereResponseFormat(f: ResponseFormat | undefined): CohereResponseFormat | undefined {
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_schema' && f.json_schema?.schema) return { type: 'json_object', json_schema: f.json_schema.schema };
  return { type: 'json_object' };
}

const clamp = (v: number, min: number, max: number): number => Math.min(max, Math.max(min, v));

function invalid(message: string, param: string): UpstreamError {
  return new UpstreamError({ category: 'invalid_request', message, param, unsent: true });
}
