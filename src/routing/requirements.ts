/**
 * What a request needs from a deployment, read once per request: the features
 * it uses, a lenient rough size for context-window filtering, and a cheap bound
 * of its size for pacing a request too small to be worth counting exactly.
 */
import type { Capability } from '../config/types.js';
import type { ChatRequest, EmbeddingsRequest } from '../protocol/openai.js';
import { DEFAULT_COMPLETION_TOKENS, extraTokens } from '../protocol/text-weight.js';
import { isAsciiBody } from '../protocol/raw-body.js';
import type { Deployment } from './deployment.js';

export interface Requirements {
  needs: Capability[];
  /** The prompt's rough size in tokens: its text weighed by protocol/text-weight.ts, images and framing. */
  promptTokens: number;
  /**
   * What must fit a context window: the prompt at ~4 characters a token, non-ASCII text not
   * weighed, images at the least one costs, plus the completion budget the client set (none: 0). A filter skips deployments
   * before any call, so it must not skip one the request fits: weighed, a Chinese or Russian
   * prompt came to 2-4× what gpt-4o counts. One that does not fit after all is refused by the
   * upstream for context length, and the chain moves on to larger windows (executor.ts).
   */
  estimatedTokens: number;
  /**
   * What the call may consume, reserved against tpm limits when the prompt is too small to be
   * worth counting exactly (core/request-lifecycle.ts): promptTokens plus the completion budget
   * (DEFAULT_COMPLETION_TOKENS when unset) for each of `n` choices, as the exact estimate reserves.
   */
  paceTokens: number;
}

/** ~4 characters a token is the usual English estimate; a bound, not a count. */
const CHARS_PER_TOKEN = 4;
/** An image as pacing weighs it: about a 1024 px image at OpenAI's high detail (765), Anthropic's (~1,400) or Gemini's (258 a tile) between. */
const IMAGE_TOKENS = 800;
/**
 * An image as the context-window filter weighs it: about the least one costs (OpenAI's low detail
 * is 85; Gemini's 258 a tile; llava's 576). At 800, ten images came to 8,000 tokens and an 8k
 * local vision model that takes them (5,760 on llava) was skipped before any call, or the client
 * told no deployment's window was large enough; one over the window after all is refused by the
 * upstream for context length, and the chain moves on to larger windows, as for text.
 */
const IMAGE_WINDOW_TOKENS = 85;

export function chatRequirements(req: ChatRequest): Requirements {
  const needs: Capability[] = [];
  let chars = 0;
  // Non-ASCII text weighs more than its length / 4 (a CJK character ~1.75 tokens): ~18 ns a short
  // string, ~20 µs a 100 KB one, so not measured when the body is known to be ASCII.
  const weigh = !isAsciiBody(req);
  let extra = 0;
  let images = 0;
  for (const m of req.messages) {
    const c = m.content;
    if (typeof c === 'string') {
      chars += c.length;
      if (weigh) extra += extraTokens(c);
    } else if (Array.isArray(c)) {
      for (const p of c) {
        if (p.type === 'text' && typeof p.text === 'string') {
          chars += p.text.length;
          if (weigh) extra += extraTokens(p.text);
        } else if (p.type === 'image_url') images++;
      }
    }
    if (m.tool_calls) {
      chars += jsonLength(m.tool_calls);
      if (weigh) extra += jsonExtraTokens(m.tool_calls);
    }
  }
  let definitions: unknown[] | undefined;
  if (req.tools && req.tools.length > 0) {
    needs.push('tools');
    definitions = req.tools;
  } else if (Array.isArray(req.functions) && req.functions.length > 0) {
    // Legacy functions are tools all the same (native adapters send them as tools): a deployment
    // declared without tools is no place for them, and their schemas count toward the prompt.
    needs.push('tools');
    definitions = req.functions;
  }
  if (definitions) {
    chars += jsonLength(definitions);
    if (weigh) extra += jsonExtraTokens(definitions);
  }
  if (images > 0) needs.push('vision');
  const rf = req.response_format?.type;
  if (rf === 'json_object' || rf === 'json_schema') needs.push('json');
  if (req.stream) needs.push('streaming');
  const framing = req.messages.length * 4;
  const promptTokens = Math.ceil(chars / CHARS_PER_TOKEN + extra) + images * IMAGE_TOKENS + framing;
  const budget = req.max_completion_tokens ?? req.max_tokens;
  const n = req.n != null && req.n > 1 ? req.n : 1;
  return {
    needs,
    promptTokens,
    estimatedTokens: Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_WINDOW_TOKENS + framing + (budget ?? 0),
    paceTokens: promptTokens + (budget ?? DEFAULT_COMPLETION_TOKENS) * n,
  };
}

/**
 * The length of `v`'s JSON text, as JSON.stringify would give it but for escapes, without
 * building the text. Tool definitions run to kilobytes on every request of an agent, and
 * their history's tool calls grow with each turn: stringifying them scans every character
 * for escapes and allocates the copy, ~6× this walk (20 tools, 8 KB: ~70 µs against ~11).
 * Bodies reach here parsed from JSON (depth-bounded by the server), so no cycles.
 */
function jsonLength(v: unknown): number {
  switch (typeof v) {
    case 'string':
      return v.length + 2;
    case 'number':
      return Number.isFinite(v) ? String(v).length : 4;
    case 'boolean':
      return v ? 4 : 5;
    case 'object': {
      if (v === null) return 4;
      let n = 2;
      let members = 0;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) n += jsonLength(v[i]);
        members = v.length;
      } else {
        for (const k in v) {
          const x = (v as Record<string, unknown>)[k];
          if (x === undefined || typeof x === 'function') continue;
          n += k.length + 3 + jsonLength(x);
          members++;
        }
      }
      return members > 0 ? n + members - 1 : n;
    }
    default:
      return 4; // undefined in an array is null
  }
}

/** What `v`'s strings and keys add for their non-ASCII text (extraTokens), walked as jsonLength walks. */
function jsonExtraTokens(v: unknown): number {
  if (typeof v === 'string') return extraTokens(v);
  if (typeof v !== 'object' || v === null) return 0;
  let extra = 0;
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) extra += jsonExtraTokens(v[i]);
  else for (const k in v) extra += extraTokens(k) + jsonExtraTokens((v as Record<string, unknown>)[k]);
  return extra;
}

/** An embeddings request's rough size: its texts weighed as a prompt's are, token-id inputs counted. */
export function embeddingsRequirements(input: EmbeddingsRequest['input']): Requirements {
  let tokens = 0;
  if (typeof input === 'string') tokens = input.length / CHARS_PER_TOKEN + extraTokens(input);
  else {
    for (const item of input as unknown[]) {
      if (typeof item === 'string') tokens += item.length / CHARS_PER_TOKEN + extraTokens(item);
      else if (typeof item === 'number') tokens++;
      else if (Array.isArray(item)) tokens += item.length;
    }
  }
  const t = Math.ceil(tokens);
  // estimatedTokens stays 0: an embedding model's window bounds each input, not their sum.
  return { needs: ['embeddings'], promptTokens: t, estimatedTokens: 0, paceTokens: t };
}

/**
 * A deployment that declares no features (tools, vision, json, embeddings) is
 * assumed to support what its provider does (most configs never list them);
 * one that declares any is taken at its word. `prefill` is never assumed:
 * continuing a cut stream on a model that would answer afresh instead would
 * duplicate text. Declaring only `prefill` (or `streaming`, always assumed)
 * lists no features, so the provider's are still assumed.
 */
export function supports(d: Deployment, cap: Capability): boolean {
  if (cap === 'prefill') return d.capabilities.has('prefill');
  if (cap === 'streaming') return true;
  if (!d.declaresFeatures) return cap !== 'embeddings' || d.provider.type !== 'anthropic';
  return d.capabilities.has(cap);
}

/** Why `d` cannot serve `r`, or null when it can. */
export function unmetRequirement(d: Deployment, r: Requirements): string | null {
  for (const cap of r.needs) if (!supports(d, cap)) return `lacks ${cap}`;
  if (d.contextWindow !== undefined && r.estimatedTokens > d.contextWindow) return `context window ${d.contextWindow} too small`;
  return null;
}
