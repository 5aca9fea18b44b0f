import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { floatToHalfBits, halfBitsToFloat } from './fp16.ts';

// Node 24 ships Math.f16round; it is an independent oracle for the rounding rules.
const f16round = (Math as unknown as { f16round: (x: number) => number }).f16round;

describe('floatToHalfBits', () => {
  it.each([
    [1, 0x3c00],
    [-2, 0xc000],
    [0.5, 0x3800],
    [65504, 0x7bff],
    [2 ** -14, 0x0400],
    [2 ** -24, 0x0001],
    [2 ** -24 * 1023, 0x03ff],
    [0, 0x0000],
    [-0, 0x8000],
    [Number.POSITIVE_INFINITY, 0x7c00],
    [Number.NEGATIVE_INFINITY, 0xfc00],
    [0.1, 0x2e66],
    [1 / 3, 0x3555],
  ])('%d → %i', (value, bits) => {
    expect(floatToHalfBits(value)).toBe(bits);
  });

  it('encodes NaN as a quiet NaN', () => {
    const bits = floatToHalfBits(Number.NaN);
    expect(bits & 0x7c00).toBe(0x7c00);
    expect(bits & 0x03ff).not.toBe(0);
  });

  it('rounds ties to even', () => {
    // 1 + 2^-11 is halfway between 1 (even mantissa) and 1 + 2^-10.
    expect(floatToHalfBits(1 + 2 ** -11)).toBe(0x3c00);
    // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
    expect(floatToHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    // Halfway between the two smallest subnormals rounds to the even one (0).
    expect(floatToHalfBits(2 ** -25)).toBe(0x0000);
    expect(floatToHalfBits(3 * 2 ** -25)).toBe(0x0002);
  });

  it('overflows to infinity from 65520 and underflows to signed zero', () => {
    expect(floatToHalfBits(65519.99)).toBe(0x7bff);
    expect(floatToHalfBits(65520)).toBe(0x7c00);
    expect(floatToHalfBits(-1e9)).toBe(0xfc00);
    expect(floatToHalfBits(1e-10)).toBe(0x0000);
    expect(floatToHalfBits(-1e-10)).toBe(0x8000);
  });

  it('carries a rounded-up subnormal into the smallest normal', () => {
    expect(floatToHalfBits(2 ** -14 - 2 ** -30)).toBe(0x0400);
  });

  it('agrees with Math.f16round for any double', () => {
    fc.assert(
      fc.property(fc.double(), (x) => {
        expect(halfBitsToFloat(floatToHalfBits(x))).toBe(f16round(x));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('halfBitsToFloat', () => {
  it.each([
    [0x3c00, 1],
    [0x7bff, 65504],
    [0x0001, 2 ** -24],
    [0x0400, 2 ** -14],
    [0x7c00, Number.POSITIVE_INFINITY],
    [0xfc00, Number.NEGATIVE_INFINITY],
  ])('%i → %d', (bits, value) => {
    expect(halfBitsToFloat(bits)).toBe(value);
  });

  it('decodes -0, and NaN for every NaN payload', () => {
    expect(Object.is(halfBitsToFloat(0x8000), -0)).toBe(true);
    expect(halfBitsToFloat(0x7e00)).toBeNaN();
    expect(halfBitsToFloat(0xfc01)).toBeNaN();
  });

  it('round-trips every non-NaN bit pattern', () => {
    const mismatches: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = halfBitsToFloat(bits);
      if (!Number.isNaN(value) && floatToHalfBits(value) !== bits) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });
});
