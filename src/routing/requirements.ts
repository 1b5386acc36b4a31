/**
 * What a request needs from a deployment, read once per request: the features
 * it uses and a cheap upper bound of its size for context-window filtering.
 */
import type { Capability } from '../config/types.js';
import type { ChatRequest } from '../protocol/openai.js';
import type { Deployment } from './deployment.js';

export interface Requirements {
  needs: Capability[];
  /** Prompt tokens (estimate) plus the requested completion budget. */
  estimatedTokens: number;
  promptChars: number;
}

/** ~4 characters a token is the usual English estimate; a bound, not a count. */
const CHARS_PER_TOKEN = 4;
const IMAGE_TOKENS = 800;

export function chatRequirements(req: ChatRequest): Requirements {
  const needs: Capability[] = [];
  let chars = 0;
  let images = 0;
  for (const m of req.messages) {
    const c = m.content;
    if (typeof c === 'string') chars += c.length;
    else if (Array.isArray(c)) {
      for (const p of c) {
        if (p.type === 'text' && typeof p.text === 'string') chars += p.text.length;
        else if (p.type === 'image_url') images++;
      }
    }
    if (m.tool_calls) chars += JSON.stringify(m.tool_calls).length;
  }
  if (req.tools && req.tools.length > 0) {
    needs.push('tools');
    chars += JSON.stringify(req.tools).length;
  } else if (Array.isArray(req.functions) && req.functions.length > 0) {
    // Legacy functions are tools all the same (native adapters send them as tools): a deployment
    // declared without tools is no place for them, and their schemas count toward the prompt.
    needs.push('tools');
    chars += JSON.stringify(req.functions).length;
  }
  if (images > 0) needs.push('vision');
  const rf = req.response_format?.type;
  if (rf === 'json_object' || rf === 'json_schema') needs.push('json');
  if (req.stream) needs.push('streaming');
  const completion = req.max_completion_tokens ?? req.max_tokens ?? 0;
  return {
    needs,
    promptChars: chars,
    estimatedTokens: Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS + req.messages.length * 4 + completion,
  };
}

export const EMBEDDINGS_REQUIREMENTS: Requirements = { needs: ['embeddings'], estimatedTokens: 0, promptChars: 0 };

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
