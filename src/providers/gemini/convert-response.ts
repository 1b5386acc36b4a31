/**
 * Gemini GenerateContentResponse → OpenAI ChatCompletion. Pure, and tolerant:
 * every field may be missing (no candidates, no content, no parts), because a
 * blocked prompt or candidate really does arrive like that.
 */
import type { AssistantMessage, ChatChoice, ChatCompletion, Usage } from '../../protocol/openai.js';
import { mapFinishReason } from './map-finish-reason.js';
import { toolArgumentsJson } from '../tool-arguments.js';
import type { ToolCallWithSignature } from './convert-request.js';
import type { GeminiCandidate, GeminiPart, GeminiUsageMetadata, GenerateContentResponse } from './wire.js';

export interface ResponseContext {
  /** The model asked for; used when the response names no `modelVersion`. */
  model: string;
  requestId: string;
  /** Unix seconds. */
  created: number;
  /** An id for each tool call (Gemini's function calls carry none). */
  newToolId: () => string;
  /** The answers asked for (`n`, Gemini's candidateCount); 1 when unset. */
  choices?: number;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/** usageMetadata → OpenAI usage; thinking tokens are billed as completion tokens. */
export function toUsage(u: GeminiUsageMetadata | undefined): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const prompt = count(u.promptTokenCount);
  const thoughts = count(u.thoughtsTokenCount);
  const completion = count(u.candidatesTokenCount) + thoughts;
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: count(u.totalTokenCount) || prompt + completion,
  };
  const cached = count(u.cachedContentTokenCount);
  if (cached > 0) usage.prompt_tokens_details = { cached_tokens: cached };
  if (thoughts > 0) usage.completion_tokens_details = { reasoning_tokens: thoughts };
  return usage;
}

export function partsOf(c: GeminiCandidate | undefined): GeminiPart[] {
  const parts = c?.content?.parts;
  return Array.isArray(parts) ? parts.filter((p): p is GeminiPart => typeof p === 'object' && p !== null) : [];
}

/** Visible text of some parts: thought summaries are reasoning, not content. */
export function textOf(parts: GeminiPart[]): string {
  let text = '';
  for (const p of parts) if (typeof p.text === 'string' && p.thought !== true) text += p.text;
  return text;
}

/** Thought summaries of some parts (returned when a request sets includeThoughts): the reasoning_content. */
export function reasoningOf(parts: GeminiPart[]): string {
  let text = '';
  for (const p of parts) if (p.thought === true && typeof p.text === 'string') text += p.text;
  return text;
}

/** A functionCall part → an OpenAI tool call with a new id; undefined for other parts. */
export function toolCallOf(p: GeminiPart, newToolId: () => string): ToolCallWithSignature | undefined {
  const fc = p.functionCall;
  if (!fc || typeof fc !== 'object' || typeof fc.name !== 'string') return undefined;
  const call: ToolCallWithSignature = {
    id: newToolId(),
    type: 'function',
    function: { name: fc.name, arguments: toolArgumentsJson(fc.args && typeof fc.args === 'object' ? fc.args : {}) },
  };
  // Same place Gemini's own OpenAI-compatible API puts it, so clients that
  // echo the assistant message back return it and Gemini 3 accepts the turn.
  if (typeof p.thoughtSignature === 'string') call.extra_content = { google: { thought_signature: p.thoughtSignature } };
  return call;
}

export function completionId(res: GenerateContentResponse, requestId: string): string {
  return `chatcmpl-${typeof res.responseId === 'string' && res.responseId ? res.responseId : requestId}`;
}

export function toChatCompletion(res: GenerateContentResponse, ctx: ResponseContext): ChatCompletion {
  const candidates = Array.isArray(res.candidates) ? res.candidates.filter((c) => c && typeof c === 'object') : [];
  const choices: ChatChoice[] = [];
  candidates.forEach((c, i) => {
    const parts = partsOf(c);
    const text = textOf(parts);
    const toolCalls: ToolCallWithSignature[] = [];
    for (const p of parts) {
      const call = toolCallOf(p, ctx.newToolId);
      if (call) toolCalls.push(call);
    }
    const message: AssistantMessage = { role: 'assistant', content: text || (toolCalls.length > 0 ? null : ''), refusal: null };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    // Reasoning is no answer: a candidate with thoughts alone still ends as an empty one (map-finish-reason.ts).
    const reasoning = reasoningOf(parts);
    if (reasoning) message.reasoning_content = reasoning;
    choices.push({
      index: typeof c.index === 'number' ? c.index : i,
      message,
      logprobs: null,
      finish_reason: mapFinishReason(c.finishReason, toolCalls.length > 0, !text && toolCalls.length === 0),
    });
  });

  // A blocked prompt has no candidates at all; the client still gets each answer it asked for,
  // as the stream ends each: with n > 1, one choice alone read as the others lost.
  if (choices.length === 0) {
    const blocked = Boolean(res.promptFeedback?.blockReason);
    const n = blocked ? (ctx.choices ?? 1) : 1;
    for (let index = 0; index < n; index++) {
      choices.push({
        index,
        message: { role: 'assistant', content: '', refusal: null },
        logprobs: null,
        finish_reason: blocked ? 'content_filter' : 'stop',
      });
    }
  }

  const completion: ChatCompletion = {
    id: completionId(res, ctx.requestId),
    object: 'chat.completion',
    created: ctx.created,
    model: typeof res.modelVersion === 'string' && res.modelVersion ? res.modelVersion : ctx.model,
    choices,
    // OpenAI sends it with every answer; Gemini has no fingerprint to give.
    system_fingerprint: null,
  };
  const usage = toUsage(res.usageMetadata);
  if (usage) completion.usage = usage;
  return completion;
}
