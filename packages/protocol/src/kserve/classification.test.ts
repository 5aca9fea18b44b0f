import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appErrorOf } from './app-error-of.ts';
import { classify, formatFixed6 } from './classification.ts';
import type { Tensor } from './tensor.ts';

const text = (t: Tensor) => (t.data as Uint8Array[]).map((b) => new TextDecoder().decode(b));
const fp32 = (shape: number[], values: number[]): Tensor => ({
  name: 'OUT',
  datatype: 'FP32',
  shape,
  data: new Float32Array(values),
});

describe('classify', () => {
  it('returns the top classes as "<value>:<index>", largest first, six decimals', () => {
    const out = classify(fp32([4], [0.1, 3.3, 2, 0.5]), 3, { batching: false });
    expect(out).toMatchObject({ name: 'OUT', datatype: 'BYTES', shape: [3] });
    expect(text(out)).toEqual(['3.300000:1', '2.000000:2', '0.500000:3']);
  });

  it('appends labels where the label list has one', () => {
    const out = classify(fp32([4], [0.1, 3.3, 2, 0.5]), 4, { batching: false, labels: ['cat', 'dog', ''] });
    expect(text(out)).toEqual(['3.300000:1:dog', '2.000000:2:', '0.500000:3', '0.100000:0:cat']);
  });

  it('classifies each batch item on its own, with indices within the item', () => {
    const out = classify(fp32([2, 1, 3], [1, 3, 2, 9, 7, 8]), 2, { batching: true, labels: ['a', 'b', 'c'] });
    expect(out.shape).toEqual([2, 2]);
    expect(text(out)).toEqual(['3.000000:1:b', '2.000000:2:c', '9.000000:0:a', '8.000000:2:c']);
  });

  it('treats a batching output as one item per batch row, and a non-batching one as one item', () => {
    expect(classify(fp32([2, 2], [1, 2, 3, 4]), 1, { batching: false }).shape).toEqual([1]);
    expect(text(classify(fp32([2, 2], [1, 2, 3, 4]), 1, { batching: false }))).toEqual(['4.000000:3']);
    expect(classify(fp32([0, 5], []), 3, { batching: true })).toMatchObject({ shape: [0, 3], data: [] });
  });

  it('returns every element when more classes are asked for than there are', () => {
    const out = classify(fp32([2], [1, 2]), 10, { batching: false });
    expect(out.shape).toEqual([2]);
    expect(text(out)).toEqual(['2.000000:1', '1.000000:0']);
  });

  it('keeps the lower index first on ties (-0 equals 0) and puts NaN last', () => {
    const out = classify(fp32([6], [Number.NaN, 1, -0, 1, 0, Number.NEGATIVE_INFINITY]), 6, { batching: false });
    expect(text(out)).toEqual(['1.000000:1', '1.000000:3', '-0.000000:2', '0.000000:4', '-inf:5', 'nan:0']);
  });

  it('prints integer outputs as integers and compares 64-bit ones exactly', () => {
    const int32: Tensor = { name: 'I', datatype: 'INT32', shape: [4], data: new Int32Array([5, -7, 12, 5]) };
    expect(text(classify(int32, 3, { batching: false }))).toEqual(['12:2', '5:0', '5:3']);
    const int64: Tensor = {
      name: 'L',
      datatype: 'INT64',
      shape: [3],
      data: new BigInt64Array([2n ** 62n, 2n ** 62n + 1n, -1n]),
    };
    expect(text(classify(int64, 2, { batching: false }))).toEqual(['4611686018427387905:1', '4611686018427387904:0']);
    const uint8: Tensor = { name: 'U', datatype: 'UINT8', shape: [2], data: Uint8Array.from([200, 255]) };
    expect(text(classify(uint8, 1, { batching: false }))).toEqual(['255:1']);
  });

  it('classifies FP16, BF16 and FP64 by value', () => {
    const fp16: Tensor = { name: 'H', datatype: 'FP16', shape: [3], data: Uint16Array.from([0x3c00, 0xc000, 0x4200]) };
    expect(text(classify(fp16, 3, { batching: false }))).toEqual(['3.000000:2', '1.000000:0', '-2.000000:1']);
    const bf16: Tensor = { name: 'B', datatype: 'BF16', shape: [2], data: Uint16Array.from([0x3f80, 0x4049]) };
    expect(text(classify(bf16, 2, { batching: false }))).toEqual(['3.140625:1', '1.000000:0']);
    const fp64: Tensor = { name: 'D', datatype: 'FP64', shape: [2], data: new Float64Array([1e21, 0.0078125]) };
    expect(text(classify(fp64, 2, { batching: false }))).toEqual(['1000000000000000000000.000000:0', '0.007812:1']);
  });

  it('refuses BYTES and BOOL outputs and counts that are not positive integers', () => {
    const bytes: Tensor = { name: 'S', datatype: 'BYTES', shape: [1], data: [new Uint8Array(1)] };
    const err = appErrorOf(() => classify(bytes, 1, { batching: false }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe("class result not available for output 'S' due to unsupported type 'BYTES'");
    const bool: Tensor = { name: 'B', datatype: 'BOOL', shape: [1], data: Uint8Array.from([1]) };
    expect(appErrorOf(() => classify(bool, 1, { batching: false })).message).toContain("unsupported type 'BOOL'");
    for (const count of [0, -1, 1.5, Number.NaN]) {
      const e = appErrorOf(() => classify(fp32([1], [1]), count, { batching: false }));
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toBe(`output 'OUT': 'classification' must be a positive integer, got ${count}`);
    }
    expect(appErrorOf(() => classify(fp32([], [1]), 1, { batching: true })).code).toBe('INVALID_ARGUMENT');
  });

  it('always returns min(N, item size) classes per item, in non-increasing order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 24, maxLength: 24 }),
        (batch, per, n, pool) => {
          const values = pool.slice(0, batch * per);
          const tensor: Tensor = { name: 'I', datatype: 'INT32', shape: [batch, per], data: Int32Array.from(values) };
          const out = classify(tensor, n, { batching: true });
          const kept = Math.min(n, per);
          expect(out.shape).toEqual([batch, kept]);
          const parsed = text(out).map((s) => s.split(':').map(Number) as [number, number]);
          for (let b = 0; b < batch; b++) {
            const item = parsed.slice(b * kept, (b + 1) * kept);
            for (const [value, index] of item) expect(value).toBe(values[b * per + index]);
            for (let k = 1; k < item.length; k++) {
              const [prev, prevIndex] = item[k - 1] as [number, number];
              const [value, index] = item[k] as [number, number];
              expect(prev > value || (prev === value && prevIndex < index)).toBe(true);
            }
          }
        },
      ),
    );
  });
});

describe('formatFixed6', () => {
  // Expected strings printed by glibc's printf("%f") for the same doubles.
  const C_PRINTF: [number, string][] = [
    [0.0078125, '0.007812'],
    [0.0234375, '0.023438'],
    [-0.0390625, '-0.039062'],
    [4.9999999999999998e-7, '0.000000'],
    [1.5e-6, '0.000002'],
    [1e21, '1000000000000000000000.000000'],
    [123456789.12345649, '123456789.123456'],
    [-1.0000000000000001e-9, '-0.000000'],
    [3.2999999999999998, '3.300000'],
    [3.2999999523162842, '3.300000'],
    [0.33333333333333331, '0.333333'],
    [5e-324, '0.000000'],
    [0.99999950000000004, '1.000000'],
    [0.99999949999999993, '0.999999'],
    [4503599627370495.5, '4503599627370495.500000'],
    [1000000000000000.2, '1000000000000000.250000'],
    [2.0000005000000001, '2.000001'],
    [-0, '-0.000000'],
    [0.0026499699115054565, '0.002650'],
    [-94.022941120910914, '-94.022941'],
    [-27910.50555087184, '-27910.505551'],
    [332915.90671656467, '332915.906717'],
    [-0.00095893955135668623, '-0.000959'],
  ];

  it.each(C_PRINTF)('prints %d as C does', (value, expected) => {
    expect(formatFixed6(value)).toBe(expected);
  });

  it('prints the largest double in full', () => {
    expect(formatFixed6(Number.MAX_VALUE)).toBe(`${BigInt(Number.MAX_VALUE)}.000000`);
  });

  it('prints special values as C does', () => {
    expect([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map(formatFixed6)).toEqual([
      'nan',
      'inf',
      '-inf',
    ]);
  });

  it('is within half a millionth of the value', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }), (x) => {
        const s = formatFixed6(x);
        expect(s).toMatch(/^-?\d+\.\d{6}$/);
        expect(Math.abs(Number(s) - x)).toBeLessThanOrEqual(5e-7 + Math.abs(x) * 2 ** -52 * 2);
      }),
    );
  });
});
