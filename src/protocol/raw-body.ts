/**
 * The client's request bytes, kept beside the parsed request so an adapter
 * that forwards the request as it came (OpenAI-compatible upstreams) can send
 * those bytes with only the model changed, instead of re-serialising the whole
 * body — for a 100 KB prompt that is most of the gateway's own work.
 *
 * Only bodies that can be spliced unambiguously are kept: the body starts
 * exactly `{"model":"ASKED"` (the model the first key, no whitespace or
 * escapes: how SDKs serialise), and no other `"model"` and no `\u` escape
 * appear anywhere. The last two matter: a second "model" key (JSON.parse keeps
 * the last one, so routing saw it) would reach the upstream beside the spliced
 * one, and an upstream that also keeps the last would run that name itself —
 * the alias, perhaps a dearer model than the deployment's — instead of what
 * the gateway chose. `\u` could spell such a key without the plain bytes.
 * Anything else is re-serialised instead. The checks run once, on the decoded
 * text at parse time; a splice is then one copy.
 *
 * Kept on the parsed object under a symbol, with the object itself as the
 * owner: a request derived from it (a resume's prefill copy, `{ ...req,
 * messages }`) copies the property but is not the owner, so it never uses
 * bytes that no longer describe it. (A WeakMap did the same, but its entries
 * outlived young-generation GCs: every request's body bytes were promoted to
 * the old space; a non-enumerable property costs a slow defineProperty.)
 */
interface RawBody {
  /** The parsed request these bytes are: a copy of it carries this record but is not its owner. */
  owner: object;
  bytes: Buffer;
  /** The model the bytes name: a splice is refused if the request's model was changed since. */
  asked: string;
  /** Byte offset just past the model's closing quote. */
  tail: number;
  /** One byte a character, and (as every kept body) no `\u` escape: every string parsed from it is ASCII. */
  ascii: boolean;
}

const kRaw = Symbol('switchyard.rawBody');
type Holder = { [kRaw]?: RawBody };
const LEAD = '{"model":"';

/** Keep `bytes` (whose UTF-8 decoding is `text`) for `parsed`, when they can be spliced. */
export function rememberRawBody(parsed: { model?: unknown }, bytes: Buffer, text: string): void {
  // Offsets into `text` are offsets into `bytes` only if the decoder dropped nothing: not after a byte order mark.
  if (!text.startsWith(LEAD) || bytes[0] !== 0x7b /* { */) return;
  const close = text.indexOf('"', LEAD.length);
  if (close === -1) return;
  const next = text.charCodeAt(close + 1);
  if (next !== 0x2c /* , */ && next !== 0x7d /* } */) return;
  const asked = text.slice(LEAD.length, close);
  if (parsed.model !== asked) return; // an escape in the name, or a later key won
  if (hasModelKey(text, close + 1) || hasUnicodeEscape(text)) return;
  (parsed as Holder)[kRaw] = { owner: parsed, bytes, asked, tail: LEAD.length + Buffer.byteLength(asked) + 1, ascii: bytes.length === text.length };
}

/**
 * Every string of `parsed` is ASCII, as known for free at parse time (its kept bytes were one a
 * character, with no `\u` escape): text weighing (protocol/text-weight.ts) need not measure a
 * 100 KB prompt's bytes to find none beyond its length. False when unknown (bytes not kept).
 */
export function isAsciiBody(parsed: object): boolean {
  const raw = (parsed as Holder)[kRaw];
  return raw !== undefined && raw.owner === parsed && raw.ascii;
}

/**
 * Is there a `"model"` at or after `from`? Searched as `model"` and then the
 * quote before it: V8 scans for a pattern's first character, and `"` is the
 * commonest character of JSON, `m` a rare one (half the cost on a chat body).
 */
function hasModelKey(text: string, from: number): boolean {
  for (let i = text.indexOf('model"', from + 1); i !== -1; i = text.indexOf('model"', i + 1)) {
    if (text.charCodeAt(i - 1) === 0x22) return true;
  }
  return false;
}

/** Is there a `\u` escape? Most bodies have no backslash at all, and one character is the cheapest search. */
function hasUnicodeEscape(text: string): boolean {
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i + 2)) {
    if (text.charCodeAt(i + 1) === 0x75 /* u */) return true;
  }
  return false;
}

/** No attempt will send these bytes again (a committed stream resumes with a derived request): let them go. */
export function forgetRawBody(parsed: object): void {
  if ((parsed as Holder)[kRaw] !== undefined) (parsed as Holder)[kRaw] = undefined;
}

/**
 * `{"model":"TARGET"` as bytes, per target: the config's deployment models, and the
 * models clients pin (`PROVIDER/MODEL`). At MAX_LEADS the cache starts over: it used
 * to stop taking new targets instead, so once a client's made-up pins had filled it, a
 * deployment first used after that (a fallback) built its lead on every request for
 * the rest of the run. Starting over costs each live target one rebuild.
 */
const LEADS = new Map<string, Buffer>();
const MAX_LEADS = 1024;

/** @internal exported for its test */
export function leadFor(target: string): Buffer {
  let lead = LEADS.get(target);
  if (lead === undefined) {
    const text = `{"model":${JSON.stringify(target)}`;
    // Its own memory, not a slice of node's shared 8 KB pool: a cached slice would keep
    // the whole block alive (pinned models a client makes up fill this cache).
    lead = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
    lead.write(text);
    if (LEADS.size >= MAX_LEADS) LEADS.clear();
    LEADS.set(target, lead);
  }
  return lead;
}

/** The client's bytes for `parsed` with the model replaced by `target`, or undefined when they were not kept. */
export function splicedBody(parsed: { model: string }, target: string): Buffer | undefined {
  const raw = (parsed as Holder)[kRaw];
  if (raw === undefined || raw.owner !== parsed || raw.asked !== parsed.model) return undefined;
  const lead = leadFor(target);
  const tail = raw.bytes.length - raw.tail;
  const out = Buffer.allocUnsafe(lead.length + tail);
  lead.copy(out, 0);
  raw.bytes.copy(out, lead.length, raw.tail);
  return out;
}
