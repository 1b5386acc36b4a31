/**
 * Token estimates made before a call, for tpm pacing and client-key limits;
 * the usage the response reports corrects them afterwards (Lease.reconcile).
 *
 * OpenAI model families are counted exactly with gpt-tokenizer's matching
 * encoding, as long as the text is small. BPE on distinct real text costs
 * about 0.25-0.3 µs per character here (a 32 KB prompt: ~9 ms of blocked event
 * loop), so above EXACT_MAX_CHARS a bound is used instead: good enough for
 * pacing, and reconciled with the reported usage anyway. Other families always
 * get the bound. Both add OpenAI's per-message framing, images a fixed cost.
 *
 * The bound is the text's UTF-16 length / 4 (/ 3.5 for OpenAI families) plus
 * EXTRA_BYTE_TOKENS per UTF-8 byte beyond one per UTF-16 unit. Length alone
 * fits English, ~4 characters a token, but most other scripts take about a
 * token a character and an emoji two or more: by length alone a Japanese
 * prompt was paced at a quarter of its tokens, and the upstream's own limit
 * answered with 429s. The excess bytes tell the scripts apart in one native
 * call (Buffer.byteLength), made only when the bound is used. ASCII has none,
 * so English counts as before; a two-byte letter (Cyrillic, Greek, Arabic,
 * Hebrew, accented Latin) comes to ~1 token, a three-byte character (CJK,
 * Hangul, Devanagari, Thai) to ~1.75, an emoji to ~2. Measured on everyday
 * prose, that is 1-1.9× cl100k's count (a proxy for other families'
 * tokenizers, which are seldom leaner on these scripts), ~10% under it for
 * Hebrew and 15-25% under for emoji; 2-5× o200k's, which packs them tighter.
 * Scripts cl100k spells out in bytes (Armenian, Ethiopic) it undercounts, up
 * to ~2×. Over is the safe side for pacing: the window holds the surplus only
 * until the reported usage corrects it.
 *
 * Encodings load lazily: loading one blocks for ~150-400 ms, so the
 * composition root should `loadTokenizersFor(configured models)` before
 * listening. An encoding first needed later (a pinned model) loads in the
 * background; until it is ready its family gets the cheap bound.
 */
import type { ChatMessage, ChatRequest, EmbeddingsRequest } from '../protocol/openai.js';
import { DEFAULT_COMPLETION_TOKENS, extraTokens } from '../protocol/text-weight.js';
import { isAsciiBody } from '../protocol/raw-body.js';

export { DEFAULT_COMPLETION_TOKENS, EXTRA_BYTE_TOKENS } from '../protocol/text-weight.js';

/** Text longer than this (in UTF-16 units) is bounded, not tokenized: ≤ ~0.6 ms of BPE. */
export const EXACT_MAX_CHARS = 2 * 1024;
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

/** Sum `count` over the messages' text: names, contents, text parts, tool calls' names and arguments. */
function sumText(messages: readonly ChatMessage[], count: Counter): number {
  let n = 0;
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

/** The bound for text of `chars` UTF-16 units whose extraTokens sum to `extra`. */
function bound(chars: number, extra: number, enc: Encoding | null): number {
  return Math.ceil(chars / (enc === null ? 4 : 3.5) + extra);
}

/** The exact counter when the family has one, the text is small enough and it has loaded (else the load starts). */
function exactCounter(chars: number, enc: Encoding | null): Counter | undefined {
  if (enc === null) return undefined;
  const counter = counters[enc];
  if (counter === undefined) void load(enc);
  return chars <= EXACT_MAX_CHARS ? counter : undefined;
}

/** Tool and schema definitions are sent too; their JSON is bounded, never tokenized. */
function definitionTokens(req: ChatRequest): number {
  let n = 0;
  if (req.tools && req.tools.length > 0) n += jsonTokens(req.tools);
  const schema = req.response_format?.json_schema;
  if (schema) n += jsonTokens(schema);
  return Math.ceil(n);
}

/** JSON.stringify leaves non-ASCII text as it is, so its bytes weigh as in the messages. */
function jsonTokens(value: unknown): number {
  const json = JSON.stringify(value);
  return json.length / 4 + extraTokens(json);
}

export function estimatePromptTokens(req: ChatRequest, model: string): number {
  const { chars, fixed } = tally(req.messages);
  const enc = encodingFor(model);
  const counter = exactCounter(chars, enc);
  let text: number | undefined;
  if (counter) {
    try {
      text = fixed + sumText(req.messages, counter);
    } catch {
      // The bound stands.
    }
  }
  // Measured here, not in tally(): the exact path has no use for the bytes; nor a body known to be ASCII.
  text ??= fixed + bound(chars, isAsciiBody(req) ? 0 : sumText(req.messages, extraTokens), enc);
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
  const enc = encodingFor(model);
  const counter = exactCounter(chars, enc);
  if (counter) {
    try {
      let n = 0;
      for (const t of texts) n += counter(t);
      return n;
    } catch {
      // The bound stands.
    }
  }
  let extra = 0;
  for (const t of texts) extra += extraTokens(t);
  return bound(chars, extra, enc);
}
