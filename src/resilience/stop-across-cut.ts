/**
 * A stop sequence split by a resume's cut. The continuing upstream is given the
 * request's `stop`, but it matches a sequence only within its own output: when
 * the text delivered before the cut ends with the start of one (`…E` for
 * `END`), the start is in its prefill, and a continuation `ND…` runs on past
 * the stop the first upstream would have ended on. So the gateway checks the
 * seam itself: only there, because a sequence wholly within the continuation
 * is the upstream's to find, and only while some sequence begun before the cut
 * may still complete — a few characters at most, held back meanwhile so that
 * none of a stop sequence reaches the client from the continuation.
 *
 * What was sent before the cut cannot be taken back: the client keeps the
 * sequence's start (`…E`), as a stream has no way to retract text. A stop
 * sequence that began in the client's own assistant prefill is not seen either.
 */
import type { ChatRequest } from '../protocol/openai.js';

/** The piece completes a stop sequence: the answer ends before it. */
export const STOP = 0;
/** The text so far may yet be a stop sequence's rest: hold it back. */
export const HOLD = 1;
/** No stop sequence can complete any more: the text held, this piece included, goes out. */
export const RELEASE = 2;
export type SeamVerdict = typeof STOP | typeof HOLD | typeof RELEASE;

/**
 * The request's stop sequences that can span a cut (two characters or more: a
 * one-character sequence has no start to leave before it), or undefined when
 * none can — then a resume does no stop check at all.
 */
export function seamStops(stop: ChatRequest['stop']): readonly string[] | undefined {
  if (stop == null) return undefined;
  const all = typeof stop === 'string' ? [stop] : stop;
  const out = all.filter((s) => s.length > 1);
  return out.length > 0 ? out : undefined;
}

/** The longest sequence's length: how much of the delivered text's end the check needs. */
export const longestStop = (stops: readonly string[]): number => stops.reduce((n, s) => Math.max(n, s.length), 0);

export class StopAcrossCut {
  /** The continuation's text since the cut, while held back. */
  held = '';

  private constructor(
    /** For each stop sequence begun before the cut and still possible: what is left of it. */
    private readonly rests: string[],
  ) {}

  /**
   * The check for a continuation of text ending with `tail` (at least the longest sequence's
   * length less one, where the text is that long), or undefined when the text ends with the
   * start of no stop sequence: a continuation then costs nothing.
   */
  static after(tail: string, stops: readonly string[]): StopAcrossCut | undefined {
    let rests: string[] | undefined;
    for (const s of stops) {
      // Every start the text ends with, not only the longest: `ABAB` after `…ABA` may complete from `A` or from `ABA`.
      for (let k = Math.min(s.length - 1, tail.length); k > 0; k--) {
        if (tail.endsWith(s.slice(0, k))) (rests ??= []).push(s.slice(k));
      }
    }
    return rests === undefined ? undefined : new StopAcrossCut(rests);
  }

  /** The continuation's next piece of text (not empty); `held` then includes it. */
  feed(piece: string): SeamVerdict {
    this.held += piece;
    const rests = this.rests;
    let live = 0;
    for (let i = 0; i < rests.length; i++) {
      const rest = rests[i]!;
      if (piece.startsWith(rest)) return STOP;
      if (rest.startsWith(piece)) rests[live++] = rest.slice(piece.length);
    }
    rests.length = live;
    return live > 0 ? HOLD : RELEASE;
  }
}
