import { describe, expect, it } from 'vitest';
import { appErrorOf } from './app-error-of.ts';
import { flattenData } from './flatten-data.ts';

describe('flattenData', () => {
  it('returns flat data as is', () => {
    const data = [1, 2, 3, 4, 5, 6];
    expect(flattenData(data, [2, 3], 6, 'x')).toBe(data);
  });

  it('flattens fully nested data row-major', () => {
    expect(
      flattenData(
        [
          [[1], [2]],
          [[3], [4]],
        ],
        [2, 2, 1],
        4,
        'x',
      ),
    ).toEqual([1, 2, 3, 4]);
  });

  it('accepts nesting along the leading dimensions only', () => {
    expect(
      flattenData(
        [
          [1, 2, 3, 4],
          [5, 6, 7, 8],
        ],
        [2, 2, 2],
        8,
        'x',
      ),
    ).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('accepts empty tensors in either form', () => {
    expect(flattenData([], [2, 0], 0, 'x')).toEqual([]);
    expect(flattenData([[], []], [2, 0], 0, 'x')).toEqual([]);
    expect(flattenData([], [0, 3], 0, 'x')).toEqual([]);
  });

  it('reports a wrong element count with the shape', () => {
    const err = appErrorOf(() => flattenData(new Array(15).fill(0), [1, 16], 16, "input 'INPUT0'"));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe("input 'INPUT0': expected 16 elements (shape [1,16]), got 15");
  });

  it('counts the leaves of nested data that is too short', () => {
    const err = appErrorOf(() => flattenData([[1, 2], [3]], [2, 2], 4, "input 'X'"));
    expect(err.message).toBe("input 'X': expected 4 elements (shape [2,2]), got 3");
  });

  it.each([
    ['ragged rows', [[1], [2, 3, 4]], [2, 2]],
    [
      'rows that do not match the dimensions',
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      [2, 3],
    ],
    ['nesting deeper than the shape', [[1], [2]], [2]],
    ['a nested scalar', [[5]], []],
    [
      'an array mixed into a row',
      [
        [1, [2]],
        [3, 4],
      ],
      [2, 2],
    ],
  ])('rejects %s', (_case, data, shape) => {
    const count = shape.reduce((a, b) => a * b, 1);
    const err = appErrorOf(() => flattenData(data, shape, count, "input 'X'"));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain("input 'X': nested 'data' does not match shape");
  });

  it('rejects data that is not an array', () => {
    expect(appErrorOf(() => flattenData(5, [1], 1, "input 'X'")).message).toBe("input 'X': 'data' must be an array");
  });

  it('survives absurdly deep nesting in a rejected body', () => {
    let deep: unknown[] = [1];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const err = appErrorOf(() => flattenData(deep, [1, 1], 1, "input 'X'"));
    expect(err.message).toContain('does not match shape');
  });
});
