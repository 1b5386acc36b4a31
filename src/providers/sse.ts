/**
 * Incremental Server-Sent Events parser (WHATWG rules: `\n`, `\r\n` or `\r` line
 * ends, multi-line `data:`, `event:` names, `:` comments ignored). Fed decoded
 * text as it arrives; complete events are appended to `events` for the caller
 * to drain, so one network read costs one call, not one promise per event.
 *
 * A line still open is searched only once it ends: a piece without a line end
 * is appended (a rope, no copy) and not searched again with the next piece, so
 * a long line costs its length, not its length squared (a 10 MB line in network
 * reads held the event loop for 2 s). An upstream that never ends its line, or
 * its event, fails the stream at MAX_EVENT_CHARS instead of filling memory.
 */
import { UpstreamError } from '../resilience/upstream-error.js';

/**
 * The longest line or event accepted from an upstream stream, in UTF-16 code units: far
 * above any real event (a whole tool call or an inline image included), and a bound on
 * what one stream holds while a line stays open.
 */
export const MAX_EVENT_CHARS = 32 * 1024 * 1024;

function tooLong(): UpstreamError {
  return new UpstreamError({ category: 'server', message: `upstream sent a stream line or event longer than ${MAX_EVENT_CHARS} characters` });
}

/** `text` holds no line end of any kind. */
const noLineEnd = (text: string): boolean => text.indexOf('\n') === -1 && text.indexOf('\r') === -1;

export interface SseEvent {
  event: string | undefined;
  data: string;
  /** The data came in more than one `data:` line (joined with \n): it cannot be written back out as one line. */
  multiline: boolean;
}

export class SseParser {
  readonly events: SseEvent[] = [];
  /** `events`, by the name a TranslatedChunkStream reads. */
  get items(): SseEvent[] {
    return this.events;
  }
  private buf = '';
  /** `buf` ends with a CR held back as the possible first half of a CRLF. */
  private heldCR = false;
  /** The event's data so far (lines joined with \n); undefined: no data line yet. */
  private data: string | undefined;
  private multiline = false;
  private event: string | undefined;
  /** Comment lines seen (keep-alives); a stall detector may want them. */
  comments = 0;

  /** Throws an UpstreamError (`server`) once a line or an event outgrows MAX_EVENT_CHARS. */
  push(text: string): void {
    const held = this.buf;
    // A held-back lone CR must meet the next piece (it ends a line unless a LF follows).
    // Known from the last search: reading the rope's last character would flatten it.
    if (held.length > 0 && !this.heldCR && noLineEnd(text)) {
      this.buf = held + text;
      if (this.buf.length > MAX_EVENT_CHARS) throw tooLong();
      return;
    }
    this.buf = held.length === 0 ? text : held + text;
    const buf = this.buf;
    let start = 0;
    // Line ends are found with native searches (a per-character loop was the
    // parser's whole cost); CR is looked for again only past the last one found,
    // so a stream without CRs costs one failed search per push.
    let cr = buf.indexOf('\r');
    for (;;) {
      if (cr !== -1 && cr < start) cr = buf.indexOf('\r', start);
      let nl = buf.indexOf('\n', start);
      if (cr !== -1 && (nl === -1 || cr < nl)) nl = cr;
      if (nl === -1) break;
      // A lone \r at the very end may be the first half of \r\n: wait for more.
      if (nl === cr && nl === buf.length - 1) break;
      this.line(buf, start, nl);
      start = nl === cr && buf.charCodeAt(nl + 1) === 10 ? nl + 2 : nl + 1;
    }
    this.buf = start === 0 ? buf : buf.slice(start);
    this.heldCR = buf.length > start && buf.charCodeAt(buf.length - 1) === 13;
    if (this.buf.length > MAX_EVENT_CHARS) throw tooLong();
  }

  /** Flush at end of input: a final event without its blank line still counts. */
  end(): void {
    // A held-back lone CR at the very end is a line end, not data.
    const rest = this.heldCR ? this.buf.slice(0, -1) : this.buf;
    this.buf = '';
    this.heldCR = false;
    if (rest.length > 0) this.line(rest, 0, rest.length);
    this.dispatch();
  }

  /** The line buf[from, to): read in place, so a data line costs one slice (its value). */
  private line(buf: string, from: number, to: number): void {
    if (from === to) return this.dispatch();
    if (buf.charCodeAt(from) === 58 /* : */) {
      this.comments++;
      return;
    }
    let colon = buf.indexOf(':', from);
    if (colon === -1 || colon > to) colon = to;
    let v = colon + 1;
    if (v < to && buf.charCodeAt(v) === 32) v++;
    const len = colon - from;
    if (len === 4 && buf.startsWith('data', from)) {
      const value = v >= to ? '' : buf.slice(v, to);
      if (value.length + (this.data?.length ?? 0) > MAX_EVENT_CHARS) throw tooLong();
      if (this.data === undefined) this.data = value;
      else {
        this.data = `${this.data}\n${value}`;
        this.multiline = true;
      }
    } else if (len === 5 && buf.startsWith('event', from)) {
      this.event = v >= to ? '' : buf.slice(v, to);
    }
    // `id` and `retry` are irrelevant for one-shot upstream streams.
  }

  private dispatch(): void {
    if (this.data !== undefined) this.events.push({ event: this.event, data: this.data, multiline: this.multiline });
    this.data = undefined;
    this.multiline = false;
    this.event = undefined;
  }
}

/** Newline-delimited JSON (Ollama's native streams): one complete line per item. */
export class NdjsonParser {
  readonly lines: string[] = [];
  /** `lines`, by the name a TranslatedChunkStream reads. */
  get items(): string[] {
    return this.lines;
  }
  private buf = '';

  /** As SseParser.push: a line still open is not searched again, and one past MAX_EVENT_CHARS throws. */
  push(text: string): void {
    if (this.buf.length > 0 && text.indexOf('\n') === -1) {
      this.buf += text;
      if (this.buf.length > MAX_EVENT_CHARS) throw tooLong();
      return;
    }
    const buf = this.buf + text;
    let start = 0;
    let nl: number;
    while ((nl = buf.indexOf('\n', start)) !== -1) {
      const line = buf.slice(start, nl).trim();
      if (line.length > 0) this.lines.push(line);
      start = nl + 1;
    }
    this.buf = buf.slice(start);
    if (this.buf.length > MAX_EVENT_CHARS) throw tooLong();
  }

  end(): void {
    const line = this.buf.trim();
    if (line.length > 0) this.lines.push(line);
    this.buf = '';
  }
}
