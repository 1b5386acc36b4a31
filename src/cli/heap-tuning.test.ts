import { describe, expect, it } from 'vitest';
import { heapGrowingFlag } from './heap-tuning.js';

describe('heapGrowingFlag', () => {
  it('V8 keeps its own policy unless SWITCHYARD_HEAP_GROWING_PERCENT asks for a factor', () => {
    expect(heapGrowingFlag([], undefined)).toBeUndefined();
    expect(heapGrowingFlag([], '0')).toBeUndefined();
    expect(heapGrowingFlag(['--enable-source-maps'], '60')).toBe('--heap-growing-percent=60');
  });

  it('ignores a value that is not a sane percentage', () => {
    for (const bad of ['-5', 'fast', '1.5', '100000', ' ']) expect(heapGrowingFlag([], bad)).toBeUndefined();
  });

  it("leaves node's own --heap-growing-percent alone, in either spelling", () => {
    expect(heapGrowingFlag(['--heap-growing-percent=80'], '60')).toBeUndefined();
    expect(heapGrowingFlag(['--heap_growing_percent=50'], '60')).toBeUndefined();
  });
});
