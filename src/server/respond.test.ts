import { describe, expect, it } from 'vitest';
import { fixed3, headerSafe } from './respond.js';

describe('fixed3 (x-switchyard-overhead-ms)', () => {
  it('writes three decimals as toFixed(3) does', () => {
    for (const [ms, text] of [
      [0, '0.000'],
      [0.0004, '0.000'],
      [0.0006, '0.001'],
      [0.01, '0.010'],
      [0.1, '0.100'],
      [0.999, '0.999'],
      [0.9996, '1.000'],
      [1, '1.000'],
      [2.5, '2.500'],
      [10.05, '10.050'],
      [123.456, '123.456'],
      [59_999.9999, '60000.000'],
    ] as const) {
      expect(fixed3(ms)).toBe(text);
    }
  });

  it('agrees with toFixed(3) on random figures away from a half', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let i = 0; i < 20_000; i++) {
      const ms = rnd() * (i % 2 ? 5 : 5000);
      const thousandths = ms * 1000;
      if (Math.abs(thousandths - Math.floor(thousandths) - 0.5) < 1e-6) continue; // a half: the two may round apart
      expect(fixed3(ms)).toBe(ms.toFixed(3));
    }
  });

  it('falls back to toFixed for what is not a small non-negative figure', () => {
    expect(fixed3(-1.5)).toBe('-1.500');
    expect(fixed3(Number.NaN)).toBe('NaN');
    expect(fixed3(2e9)).toBe('2000000000.000');
  });
});

describe('headerSafe (x-switchyard-deployment, x-switchyard-selection)', () => {
  it('leaves printable ASCII as it is', () => {
    expect(headerSafe('openai/gpt-4o-mini')).toBe('openai/gpt-4o-mini');
    expect(headerSafe('fallback:smart (weighted, rank 2)')).toBe('fallback:smart (weighted, rank 2)');
  });

  it('percent-encodes what a header cannot carry, keeping the / between provider and model', () => {
    expect(headerSafe('up/é')).toBe('up/%C3%A9');
    expect(headerSafe('up/org/mödel\n')).toBe('up/org/m%C3%B6del%0A');
    // A lone surrogate (a client can pin one) made the encoder throw: a 500 for a served answer.
    expect(headerSafe('up/\ud800x')).toBe('up/%EF%BF%BDx');
  });
});
