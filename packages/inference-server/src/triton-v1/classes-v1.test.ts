import type { Tensor } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { batchClasses, toFloat32 } from './classes-v1.ts';

const utf8 = new TextEncoder();
const bytes = (shape: number[], values: string[]): Tensor => ({
  name: 'OUT',
  datatype: 'BYTES',
  shape,
  data: values.map((v) => utf8.encode(v)),
});

describe('batchClasses', () => {
  it('gives one Classes per batch item with idx, value and label', () => {
    expect(batchClasses(bytes([2, 2], ['0.750000:3:cat', '0.250000:1', '1.000000:0:a:b', '0.000000:2']), true)).toEqual(
      [
        {
          cls: [
            { idx: 3, value: 0.75, label: 'cat' },
            { idx: 1, value: 0.25 },
          ],
        },
        {
          cls: [
            { idx: 0, value: 1, label: 'a:b' },
            { idx: 2, value: 0 },
          ],
        },
      ],
    );
  });

  it('reads a non-batching output as one item, integers and non-finite values included', () => {
    expect(batchClasses(bytes([3], ['14:15', 'inf:2', 'nan:0']), false)).toEqual([
      {
        cls: [
          { idx: 15, value: 14 },
          { idx: 2, value: Number.POSITIVE_INFINITY },
          { idx: 0, value: Number.NaN },
        ],
      },
    ]);
  });

  it('refuses what classification never produces', () => {
    expect(() => batchClasses({ name: 'X', datatype: 'FP32', shape: [1], data: new Float32Array(1) }, false)).toThrow(
      /did not produce BYTES/,
    );
    expect(() => batchClasses(bytes([1], ['garbage']), false)).toThrow(/unexpected classification entry/);
  });
});

describe('toFloat32', () => {
  it('is the shortest decimal of the float32 value', () => {
    expect(toFloat32(0.1)).toBe(0.1);
    expect(toFloat32(0.123456789)).toBe(0.12345679);
    expect(toFloat32(3.3)).toBe(3.3);
    expect(Math.fround(toFloat32(1 / 3))).toBe(Math.fround(1 / 3));
    expect(toFloat32(1e40)).toBe(Number.POSITIVE_INFINITY);
  });
});
