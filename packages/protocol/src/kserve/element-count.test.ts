import { describe, expect, it } from 'vitest';
import { appErrorOf } from './app-error-of.ts';
import { elementCount, formatShape, MAX_RANK } from './element-count.ts';

describe('elementCount', () => {
  it('multiplies dimensions; a scalar shape holds one element', () => {
    expect(elementCount([2, 3, 4], 'x')).toBe(24);
    expect(elementCount([], 'x')).toBe(1);
  });

  it('is 0 when any dimension is 0, however large the others', () => {
    expect(elementCount([0, 2 ** 40, 2 ** 40], 'x')).toBe(0);
  });

  it.each([[[1, -1]], [[1.5]], [[Number.NaN]], [[2 ** 60]]])('rejects dimension in %j', (shape) => {
    const err = appErrorOf(() => elementCount(shape, "input 'X'"));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain("input 'X': invalid shape");
    expect(err.message).toContain('non-negative integers');
  });

  it('rejects counts that overflow or pass the limit', () => {
    const overflow = appErrorOf(() => elementCount([2 ** 30, 2 ** 30, 2 ** 30], "input 'X'"));
    expect(overflow.code).toBe('INVALID_ARGUMENT');
    expect(overflow.message).toContain('too many elements');
    const limited = appErrorOf(() => elementCount([4, 4], "input 'X'", 15));
    expect(limited.message).toBe("input 'X': shape [4,4] has too many elements (limit 15)");
    expect(elementCount([4, 4], 'x', 16)).toBe(16);
  });

  it('caps the rank', () => {
    const err = appErrorOf(() => elementCount(new Array(MAX_RANK + 1).fill(1), "input 'X'"));
    expect(err.message).toContain('dimensions (limit 64)');
  });
});

describe('formatShape', () => {
  it('prints the compact form', () => {
    expect(formatShape([1, 16])).toBe('[1,16]');
    expect(formatShape([])).toBe('[]');
  });
});
