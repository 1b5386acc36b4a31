/**
 * A streaming body as decoded text, pulled: `read` returns what has arrived
 * (null when nothing has: then `wait`), `done` once the body ended and all of
 * it was read. Parsers built on it await only when there is nothing to parse,
 * instead of one async-generator step per network read — thousands of slow
 * streams then hold no generator frames or promises between their events.
 */
import { StringDecoder } from 'node:string_decoder';
import type { UpstreamBody } from './http-exchange.js';

export class TextSource {
  // StringDecoder, not TextDecoder: the same replacement of bad bytes, but no ICU
  // converter per stream (a few KB each, thousands of streams at once).
  private readonly decoder = new StringDecoder('utf8');
  private first = true;
  done = false;

  constructor(
    private readonly body: UpstreamBody,
    private readonly mapError: (err: unknown) => Error,
  ) {
    body.streaming = true;
  }

  /** Text received and not yet read (may be ''), or null when nothing is left now; throws the transport error of a failed body. */
  read(): string | null {
    const body = this.body;
    if (body.hasData()) {
      let text = this.decoder.write(body.takeAll());
      // A leading byte-order mark is not content (TextDecoder dropped it too).
      if (this.first && text.length > 0) {
        this.first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      return text;
    }
    if (body.failure !== undefined) throw this.mapError(body.failure);
    if (body.ended && !this.done) {
      this.done = true;
      return this.decoder.end();
    }
    return null;
  }

  /** Resolves when something changed: data, the end, or a failure. */
  wait(): Promise<void> {
    return this.body.next();
  }

  /** `wait` without a promise: `wake` is called once, when something changed. */
  onChange(wake: () => void): void {
    this.body.onNext(wake);
  }

  /** Not reading any further: release the connection (aborting the exchange unless it ended). */
  release(): void {
    this.body.abandon();
  }
}
