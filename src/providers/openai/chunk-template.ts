/**
 * Content chunks built without JSON.parse. After the first one, an
 * OpenAI-format stream's events differ only in the text of their delta:
 *
 *   {"id":"…","object":"chat.completion.chunk","created":…,"model":"…","choices":[{"index":0,"delta":{"content":"TEXT"},"logprobs":null,"finish_reason":null}]}
 *
 * A template learnt from one parsed content chunk keeps the text before and
 * after its TEXT and the parsed members; an event whose text starts and ends
 * the same way, with a TEXT holding no quote, backslash or control character,
 * is the same JSON with another string in that one place, so it is built from
 * copies of the template's members and that string. A last member whose
 * plain text changes each event (OpenAI's `obfuscation`, random padding) is a
 * second such slot. JSON.parse was the stream path's largest cost (~10k
 * instructions an event, BENCHMARKS.md); anything else (the role chunk, the
 * finish, usage, tool calls, escapes in the text, spaced JSON, other members
 * that change) is parsed as before.
 *
 * Each chunk gets its own objects: a consumer may change one (a resumed
 * stream's chunks are relabelled), and must not change the next. A template
 * keeps nothing of the event it was learnt from (that text is a slice of a
 * whole socket read), only its own copies.
 */
import type { ChatCompletionChunk } from '../../protocol/openai.js';
import { RAW_JSON, type WithRaw } from '../types.js';

const CONTENT_KEY = '"content":"';

type Plain = Record<string, unknown>;

const isPrimitive = (v: unknown) => v === null || (typeof v !== 'object' && typeof v !== 'function');

/** Holds only primitives, apart from `except`, and no member a copy could not make (an own `__proto__`, as JSON.parse makes one). */
function flatExcept(o: Plain, except: string): boolean {
  for (const k in o) if (k === '__proto__' || (k !== except && !isPrimitive(o[k]))) return false;
  return true;
}

/**
 * A copy made member by member from an empty object, so every stream's
 * template of the same members shares one hidden class: a spread copy gets a
 * class of its own, and the build's copies then fall onto V8's slow path once
 * a few dozen streams each had their own (measured: 2.5× the build's cost).
 */
function copyOf(o: Plain): Plain & { [RAW_JSON]?: string } {
  const copy: Plain & { [RAW_JSON]?: string } = {};
  for (const k in o) copy[k] = o[k];
  return copy;
}

/** `s` as a string of its own: a slice keeps the whole string it was cut from alive; a concatenation, once flattened by the slice, does not. */
const detached = (s: string): string => (' ' + s).slice(1);

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The text needs no unescaping (and JSON.parse would take it as is): no quote, backslash or control character. */
function isPlainText(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c < 0x20) return false;
  }
  return true;
}

/** How a chunk whose last member is a string ends: that string's closing quote and the chunk's brace. */
const STRING_LAST = '"}';

/**
 * The chunk's last member as a slot of its own, when it holds plain text written
 * `"name":"TEXT"}` after the content (which closes at `after`): where TEXT starts.
 */
function lastSlot(members: Plain, data: string, after: number): { name: string; text: string; from: number } | undefined {
  const names = Object.keys(members);
  const name = names[names.length - 1]!;
  const text = members[name];
  if (typeof text !== 'string' || !data.endsWith(STRING_LAST)) return undefined;
  const from = data.length - STRING_LAST.length - text.length;
  const key = `"${name}":"`;
  if (from - key.length <= after || data.slice(from - key.length, from) !== key) return undefined;
  return data.slice(from, from + text.length) === text && isPlainText(data, from, from + text.length) ? { name, text, from } : undefined;
}

export class ChunkTemplate {
  private constructor(
    /** The event's text up to and including the content's opening quote. */
    private readonly head: string,
    /**
     * The event's text from the content's closing quote: to its end, or, with a
     * `last` member, to that member's opening quote (its text varies, then `"}`).
     */
    private readonly tail: string,
    /** The chunk's last member when it is a string of its own each event (OpenAI's `obfuscation`): its name. */
    private readonly last: string | undefined,
    /** The chunk's members (choices among them, replaced per chunk) and the raw text's slot. */
    private readonly top: Plain,
    /** The one choice's members (delta among them, replaced per chunk). */
    private readonly choice: Plain,
  ) {}

  /** A template from a chunk JSON.parse made of `data`, or undefined when it is not a plain content chunk. */
  static learn(chunk: ChatCompletionChunk, data: string): ChunkTemplate | undefined {
    const members = chunk as unknown as Plain;
    if (!flatExcept(members, 'choices') || chunk.choices.length !== 1) return undefined;
    const choice = chunk.choices[0] as unknown as Plain;
    if (choice === null || typeof choice !== 'object' || Array.isArray(choice) || !flatExcept(choice, 'delta')) return undefined;
    const delta = choice.delta as Plain | null | undefined;
    if (delta === null || typeof delta !== 'object' || Array.isArray(delta)) return undefined;
    const content = delta.content;
    if (Object.keys(delta).length !== 1 || typeof content !== 'string') return undefined;
    const at = data.indexOf(CONTENT_KEY);
    if (at === -1 || data.indexOf(CONTENT_KEY, at + 1) !== -1) return undefined;
    const from = at + CONTENT_KEY.length;
    const to = from + content.length;
    if (data.charCodeAt(to) !== 0x22 || data.slice(from, to) !== content || !isPlainText(data, from, to)) return undefined;
    const slot = lastSlot(members, data, to);
    const last = slot?.name;
    const lastText = slot?.text;
    const head = detached(data.slice(0, from));
    const tail = detached(data.slice(to, slot === undefined ? data.length : slot.from));
    // The one `"content":"` is the delta's key only if the JSON spells that key so: it may be
    // written otherwise (`"content": "…"`, `\u` escapes, a repeated member that wins) while
    // another member spells `"content":"` with the same text. The same goes for the last
    // member's text. One parse of a probe (other text in each slot) tells.
    const probeText = content === 'x' ? 'y' : 'x';
    const probeLast = lastText === 'x' ? 'y' : 'x';
    const probe = parsedOrUndefined(head + probeText + tail + (last === undefined ? '' : probeLast + STRING_LAST)) as Plain | undefined;
    const probeChoices = probe?.choices as ChatCompletionChunk['choices'] | undefined;
    if (probeChoices?.[0]?.delta?.content !== probeText || (last !== undefined && probe![last] !== probeLast)) return undefined;
    // Copies (the chunk handed out may be changed by its consumer), with the raw text's slot
    // in place (added to each built chunk instead, it cost ~20× the whole build). Nothing of
    // `data` is kept: it is a slice of a whole socket read, which would live as long as the stream.
    const top = copyOf(members);
    top[RAW_JSON] = '';
    return new ChunkTemplate(head, tail, last, top, copyOf(choice));
  }

  /** The chunk `data` parses to, when it is this template with other plain text; else undefined (parse it). */
  build(data: string): WithRaw<ChatCompletionChunk> | undefined {
    const { head, tail, last } = this;
    // Compared as slices: V8's startsWith walks a long prefix character by character (~10× slower here).
    if (data.slice(0, head.length) !== head) return undefined;
    // Plain text holds no quote: the content ends at the next one.
    const end = data.indexOf('"', head.length);
    if (end === -1 || !isPlainText(data, head.length, end)) return undefined;
    let lastText: string | undefined;
    if (last === undefined) {
      if (data.slice(end) !== tail) return undefined;
    } else {
      const from = end + tail.length;
      const to = data.length - STRING_LAST.length;
      if (from > to || data.slice(end, from) !== tail || data.slice(to) !== STRING_LAST || !isPlainText(data, from, to)) return undefined;
      lastText = data.slice(from, to);
    }
    const chunk = { ...this.top, choices: [{ ...this.choice, delta: { content: data.slice(head.length, end) } }] } as unknown as WithRaw<ChatCompletionChunk>;
    if (lastText !== undefined) (chunk as unknown as Plain)[last!] = lastText;
    chunk[RAW_JSON] = data;
    return chunk;
  }
}
