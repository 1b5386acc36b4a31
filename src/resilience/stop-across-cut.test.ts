import { describe, expect, it } from 'vitest';
import { HOLD, RELEASE, STOP, StopAcrossCut, longestStop, seamStops } from './stop-across-cut.js';

describe('seamStops', () => {
  it('keeps the sequences that can span a cut: none for no stop, or only one-character ones', () => {
    expect(seamStops(undefined)).toBeUndefined();
    expect(seamStops(null)).toBeUndefined();
    expect(seamStops([])).toBeUndefined();
    expect(seamStops(['\n', 'x'])).toBeUndefined();
    expect(seamStops('END')).toEqual(['END']);
    expect(seamStops(['.', '\n\n', 'User:'])).toEqual(['\n\n', 'User:']);
    expect(longestStop(['\n\n', 'User:'])).toBe(5);
  });
});

describe('StopAcrossCut', () => {
  it('is not needed when the text ends with the start of no sequence (nor with a whole one: that was the first upstream\'s to stop on)', () => {
    expect(StopAcrossCut.after('Hello', ['END', 'STOP'])).toBeUndefined();
    expect(StopAcrossCut.after('', ['END'])).toBeUndefined();
    expect(StopAcrossCut.after('the END', ['END'])).toBeUndefined();
  });

  it('stops on the piece that completes a sequence, whatever follows it in that piece', () => {
    const seam = StopAcrossCut.after('…E', ['END'])!;
    expect(seam.feed('ND and on')).toBe(STOP);
  });

  it('holds pieces while a sequence may still complete, then stops or releases them all', () => {
    const stops = StopAcrossCut.after('42</', ['</answer>'])!;
    expect(stops.feed('ans')).toBe(HOLD);
    expect(stops.feed('wer')).toBe(HOLD);
    expect(stops.feed('>\n')).toBe(STOP);

    const goes = StopAcrossCut.after('42</', ['</answer>'])!;
    expect(goes.feed('ans')).toBe(HOLD);
    expect(goes.feed('atz')).toBe(RELEASE);
    expect(goes.held).toBe('ansatz');
  });

  it('follows every start the text ends with: AAB after …AA completes from AA, or from A', () => {
    expect(StopAcrossCut.after('xAA', ['AAB'])!.feed('B')).toBe(STOP);
    const shorter = StopAcrossCut.after('xAA', ['AAB'])!;
    expect(shorter.feed('A')).toBe(HOLD); // AA+A: not AAB; A+A: on its way
    expect(shorter.feed('B')).toBe(STOP);
  });

  it('checks several sequences at once, and one that cannot complete does not hold the text', () => {
    const seam = StopAcrossCut.after('Ask the U', ['User:', 'Um', '\n\n'])!;
    expect(seam.feed('s')).toBe(HOLD);
    expect(seam.feed('ual')).toBe(RELEASE);
    expect(seam.held).toBe('sual');
  });
});
