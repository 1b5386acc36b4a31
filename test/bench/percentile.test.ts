/** The latency percentiles the load generator reports (p50, p99), by nearest rank. */
import { describe, expect, it } from 'vitest';
import { asLibrary } from './as-library.js';

const { percentile } = await asLibrary(() => import('../../bench/loadgen.js'));

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('percentile', () => {
  it('p99 of 100 latencies is the 99th, not the slowest', () => {
    expect(percentile(oneTo(100), 0.99)).toBe(99);
    expect(percentile(oneTo(1000), 0.99)).toBe(990);
    // Not a whole rank: the next one up (99 % of 150 is 148.5: the 149th).
    expect(percentile(oneTo(150), 0.99)).toBe(149);
  });

  it('p50 is the value with half at or below it', () => {
    expect(percentile(oneTo(100), 0.5)).toBe(50);
    expect(percentile([10, 20], 0.5)).toBe(10);
    expect(percentile([10, 20, 30], 0.5)).toBe(20);
  });

  it('stays within the samples at either end, and is NaN for none', () => {
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([7], 0.5)).toBe(7);
    expect(percentile(oneTo(10), 0)).toBe(1);
    expect(percentile(oneTo(10), 1)).toBe(10);
    expect(percentile([], 0.5)).toBeNaN();
  });
});
