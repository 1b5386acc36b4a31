/**
 * The client's request bytes, kept beside the parsed request so an adapter
 * that forwards the request as it came (OpenAI-compatible upstreams) can send
 * those bytes with only the model changed, instead of re-serialising the whole
 * body — for a 100 KB prompt that is most of the gateway's own work.
 *
 * A WeakMap, not a property: a request derived from it (a resume's prefill
 * copy, `{ ...req, messages }`) is a different object and never inherits
 * bytes that no longer describe it.
 */
const RAW = new WeakMap<object, Uint8Array>();

export function rememberRawBody(parsed: object, bytes: Uint8Array): void {
  RAW.set(parsed, bytes);
}

export function rawBodyOf(parsed: object): Uint8Array | undefined {
  return RAW.get(parsed);
}

/** No attempt will send these bytes again (a committed stream resumes with a derived request): let them go. */
export function forgetRawBody(parsed: object): void {
  RAW.delete(parsed);
}

const MODEL_KEY = Buffer.from('{"model":');
const MODEL_NAME = Buffer.from('"model"');
const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * `bytes` with the leading `{"model":"ASKED"` replaced by `{"model":"TARGET"`,
 * or undefined unless that is unambiguous: the body starts exactly so (the
 * model the first key, no whitespace or escapes: how SDKs serialise), and no
 * other `"model"` and no `\u` escape appear anywhere. The last two matter: a
 * second "model" key (JSON.parse keeps the last one, so routing saw ASKED too)
 * would reach the upstream beside the spliced one, and an upstream that also
 * keeps the last would run ASKED itself — the alias name, perhaps a dearer model
 * than the deployment's — instead of what the gateway chose. `\u` could spell
 * such a key without the plain bytes. Anything else is re-serialised instead.
 */
export function spliceModel(bytes: Uint8Array, asked: string, target: string): Buffer | undefined {
  const value = Buffer.from(JSON.stringify(asked));
  const end = MODEL_KEY.length + value.length;
  if (bytes.length <= end) return undefined;
  const next = bytes[end];
  if (next !== 0x2c /* , */ && next !== 0x7d /* } */) return undefined;
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (MODEL_KEY.compare(b, 0, MODEL_KEY.length) !== 0 || value.compare(b, MODEL_KEY.length, end) !== 0) return undefined;
  // Native scans (memmem): a few µs for a 100 KB prompt, far below re-serialising it.
  if (b.indexOf(MODEL_NAME, end) !== -1 || b.indexOf(UNICODE_ESCAPE, end) !== -1) return undefined;
  return Buffer.concat([MODEL_KEY, Buffer.from(JSON.stringify(target)), b.subarray(end)]);
}
