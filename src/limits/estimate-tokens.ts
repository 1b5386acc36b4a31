/**
 * Token estimates made before a call, for tpm pacing and client-key limits;
 * the usage the response reports corrects them afterwards (Lease.reconcile).
 *
 * OpenAI model families are counted exactly with gpt-tokenizer's matching
 * encoding, as long as the text is small. BPE on distinct real text costs
 * about 0.25-0.3 µs per character here (a 32 KB prompt: ~9 ms of blocked event
 * loop), so above EXACT_MAX_CHARS a bound (chars / 3.5) is used instead: good
 * enough for pacing, and reconciled with the reported usage anyway. Other
 * families get chars / 4. Both add OpenAI's per-message framing, images a
 * fixed cost.
 *
 * Encodings load lazily: loading one blocks for ~150-400 ms, so the
 * composition root should `loadTokenizersFor(configured models)` before
 * listening. An encoding first needed later (a pinned model) loads in the
 * background; until it is ready its family gets the cheap bound.
 */
import type { ChatMessage, ChatRequest, EmbeddingsRequest } from '../protocol/openai.js';

/** Text longer than this (in UTF-16 units) is bounded, not tokenized: ≤ ~0.6 ms of BPE. */
export const EXACT_MAX_CHARS = 2 * 1024;
/** Completion budget assumed when the request sets no max_tokens / max_completion_tokens. */
export const DEFAULT_COMPLETION_TOKENS = 1024;
/** OpenAI's cost of one image: high detail 1024×1024 (765) and any low-detail image (85). */
export const IMAGE_TOKENS = 765;
export const IMAGE_TOKENS_LOW = 85;
/** OpenAI chat framing: per message, per `name`, and the reply's priming. */
const PER_MESSAGE = 3;
const PER_NAME = 1;
const REPLY_PRIMING = 3;

export type Encoding = 'o200k_base' | 'cl100k_base';

/** The encoding of an OpenAI model family, from its name (a `PROVIDER/` prefix is ignored); null for others. */
export function encodingFor(model: string): Encoding | null {
  const m = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  if (/^(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[134](?:-|$))/.test(m)) return 'o200k_base';
  if (/^(?:gpt-4|gpt-3\.5|gpt-35|text-embedding-(?:3|ada-002))/.test(m)) return 'cl100k_base';
  return null;
}

type Counter = (text: string) => number;
const counters: Partial<Record<Encoding, Counter>> = {};
const loading: Partial<Record<Encoding, Promise<void>>> = {};
// Count special-token text (`<|endoftext|>`) as ordinary text instead of throwing on it.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

function load(enc: Encoding): Promise<void> {
  return (loading[enc] ??= (
    enc === 'o200k_base'
      ? import('gpt-tokenizer/encoding/o200k_base')
      : import('gpt-tokenizer/encoding/cl100k_base')
  ).then(
    (m) => {
      counters[enc] = (text) => m.countTokens(text, AS_TEXT);
    },
    () => {
      // Without the tokenizer the cheap bound stays in use; nothing to report per request.
    },
  ));
}

/** Load the given encodings now (default: both); resolves when they are ready. */
export async function loadTokenizers(encodings: readonly Encoding[] = ['o200k_base', 'cl100k_base']): Promise<void> {
  await Promise.all(encodings.map(load));
}

/** Load just the encodings these models need (none for non-OpenAI families). */
export async function loadTokenizersFor(models: Iterable<string>): Promise<void> {
  const needed = new Set<Encoding>();
  for (const m of models) {
    const enc = encodingFor(m);
    if (enc) needed.add(enc);
  }
  await loadTokenizers([...needed]);
}

interface Tally {
  chars: number;
  fixed: number;
}

/** Sum the text length and the fixed costs (framing, images) of the messages. */
function tally(messages: readonly ChatMessage[]): Tally {
  let chars = 0;
  let fixed = REPLY_PRIMING;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    fixed += PER_MESSAGE;
    if (typeof m.name === 'string') {
      fixed += PER_NAME;
      chars += m.name.length;
    }
    const c = m.content;
    if (typeof c === 'string') chars += c.length;
    else if (Array.isArray(c)) {
      for (let j = 0; j < c.length; j++) {
        const p = c[j]!;
        if (p.type === 'text' && typeof p.text === 'string') chars += p.text.length;
        else if (p.type === 'image_url') {
          const detail = (p as { image_url?: { detail?: string } }).image_url?.detail;
          fixed += detail === 'low' ? IMAGE_TOKENS_LOW : IMAGE_TOKENS;
        }
      }
    }
    if (m.tool_calls) {
      for (const call of m.tool_calls) chars += call.function.name.length + call.function.arguments.length;
    }
  }
  return { chars, fixed };
}

/** Exact count of the messages' text with `count`, framing and images added. */
function countExact(messages: readonly ChatMessage[], fixed: number, count: Counter): number {
  let n = fixed;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (typeof m.name === 'string') n += count(m.name);
    const c = m.content;
    if (typeof c === 'string') n += count(c);
    else if (Array.isArray(c)) {
      for (let j = 0; j < c.length; j++) {
        const p = c[j]!;
        if (p.type === 'text' && typeof p.text === 'string') n += count(p.text);
      }
    }
    if (m.tool_calls) {
      for (const call of m.tool_calls) n += count(call.function.name) + count(call.function.arguments);
    }
  }
  return n;
}

/** Tool and schema definitions are sent too; their JSON is estimated, never tokenized. */
function definitionTokens(req: ChatRequest): number {
  let chars = 0;
  if (req.tools && req.tools.length > 0) chars += JSON.stringify(req.tools).length;
  const schema = req.response_format?.json_schema;
  if (schema) chars += JSON.stringify(schema).length;
  return Math.ceil(chars / 4);
}

/** Text-only estimate for one family; `counter` set means exact counting is allowed. */
function textTokens(chars: number, enc: Encoding | null): { bound: number; counter: Counter | undefined } {
  if (enc === null) return { bound: Math.ceil(chars / 4), counter: undefined };
  const counter = counters[enc];
  if (counter === undefined) void load(enc);
  return { bound: Math.ceil(chars / 3.5), counter: chars <= EXACT_MAX_CHARS ? counter : undefined };
}

export function estimatePromptTokens(req: ChatRequest, model: string): number {
  const { chars, fixed } = tally(req.messages);
  const { bound, counter } = textTokens(chars, encodingFor(model));
  let text = fixed + bound;
  if (counter) {
    try {
      text = countExact(req.messages, fixed, counter);
    } catch {
      // The bound stands.
    }
  }
  return text + definitionTokens(req);
}

/** Prompt plus the completion budget (times `n` choices): what the call may consume. */
export function estimateRequestTokens(req: ChatRequest, model: string): number {
  const completion = req.max_completion_tokens ?? req.max_tokens ?? DEFAULT_COMPLETION_TOKENS;
  const n = req.n != null && req.n > 1 ? req.n : 1;
  return estimatePromptTokens(req, model) + completion * n;
}

export function estimateEmbeddingsTokens(req: EmbeddingsRequest, model: string): number {
  const input = req.input;
  if (typeof input === 'string') return stringTokens([input], model);
  if (input.length === 0) return 0;
  if (typeof input[0] === 'number') return input.length; // already token ids
  if (Array.isArray(input[0])) {
    let n = 0;
    for (const ids of input as number[][]) n += ids.length;
    return n;
  }
  return stringTokens(input as string[], model);
}

function stringTokens(texts: readonly string[], model: string): number {
  let chars = 0;
  for (const t of texts) chars += t.length;
  const { bound, counter } = textTokens(chars, encodingFor(model));
  if (!counter) return bound;
  try {
    let n = 0;
    for (const t of texts) n += counter(t);
    return n;
  } catch {
    return bound;
  }
}
