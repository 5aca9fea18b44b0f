/**
 * fast-check arbitraries shared by the codec property tests (test-only: nothing in src imports it).
 */
import fc from 'fast-check';
import type { JsonDatatype } from './decode-json-values.ts';
import { DATATYPES, type Tensor, type TensorData } from './tensor.ts';

export const JSON_DATATYPES: readonly JsonDatatype[] = DATATYPES.filter((d): d is JsonDatatype => d !== 'BF16');

/** Rank 0..4, small dimensions, zeros included: empty tensors are the classic edge case. */
export const shapeArb = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 4 });

export function product(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

const INT_BOUNDS: Readonly<Record<string, [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffff_ffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x8000_0000, 0x7fff_ffff],
  // JSON requests carry 64-bit integers only within the exact range of doubles.
  INT64: [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  UINT64: [0, Number.MAX_SAFE_INTEGER],
};

/** A value a client may legitimately send in JSON for `datatype`. */
export function jsonValueArb(datatype: JsonDatatype): fc.Arbitrary<unknown> {
  switch (datatype) {
    case 'BOOL':
      return fc.boolean();
    case 'FP16':
    case 'FP32':
    case 'FP64':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'BYTES':
      return fc.string({ unit: 'binary' });
    default: {
      const [min, max] = INT_BOUNDS[datatype] ?? [0, 0];
      return fc.integer({ min, max });
    }
  }
}

/** A JSON tensor case: datatype, shape and exactly product(shape) flat values. */
export const jsonTensorCaseArb = fc
  .record({ datatype: fc.constantFrom(...JSON_DATATYPES), shape: shapeArb })
  .chain(({ datatype, shape }) => {
    const n = product(shape);
    return fc
      .array(jsonValueArb(datatype), { minLength: n, maxLength: n })
      .map((values) => ({ datatype, shape, values }));
  });

const utf8 = new TextEncoder();

/** -0, ±Inf, NaN, smallest subnormal, largest finite: uniform bit patterns almost never hit them. */
const FP16_SPECIALS = [0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x7bff];

/** Storage a runner may produce for `datatype`: every representable value, NaN and -0 included. */
export function tensorDataArb(datatype: JsonDatatype, n: number): fc.Arbitrary<TensorData> {
  const len = { minLength: n, maxLength: n };
  switch (datatype) {
    case 'BOOL':
      return fc.array(fc.boolean(), len).map((v) => Uint8Array.from(v, Number));
    case 'UINT8':
      return fc.uint8Array(len);
    case 'UINT16':
      return fc.uint16Array(len);
    case 'UINT32':
      return fc.uint32Array(len);
    case 'INT8':
      return fc.int8Array(len);
    case 'INT16':
      return fc.int16Array(len);
    case 'INT32':
      return fc.int32Array(len);
    case 'INT64':
      return fc.bigInt64Array(len);
    case 'UINT64':
      return fc.bigUint64Array(len);
    case 'FP16':
      // NaN payloads do not survive JSON ("NaN" has no payload), so NaNs are the canonical one.
      return fc
        .array(fc.oneof(fc.constantFrom(...FP16_SPECIALS), fc.integer({ min: 0, max: 0xffff })), len)
        .map((v) => Uint16Array.from(v, (b) => ((b & 0x7c00) === 0x7c00 && (b & 0x3ff) !== 0 ? 0x7e00 : b)));
    case 'FP32':
      return fc.float32Array(len);
    case 'FP64':
      return fc.float64Array(len);
    case 'BYTES':
      return fc.array(fc.string({ unit: 'binary' }), len).map((v) => v.map((s) => utf8.encode(s)));
  }
}

/** A tensor with a JSON-expressible datatype; the name is set by the caller. */
export const tensorArb: fc.Arbitrary<Omit<Tensor, 'name'>> = fc
  .record({ datatype: fc.constantFrom(...JSON_DATATYPES), shape: shapeArb })
  .chain(({ datatype, shape }) => tensorDataArb(datatype, product(shape)).map((data) => ({ datatype, shape, data })));

/**
 * Nests flat row-major values along the first `depth` dimensions (0 = flat, rank-1 = fully nested):
 * every form a client may send.
 */
export function nest(values: readonly unknown[], shape: readonly number[], depth: number): unknown[] {
  if (depth === 0 || shape.length === 0) return [...values];
  const [dim = 0, ...rest] = shape;
  const stride = product(rest);
  return Array.from({ length: dim }, (_, i) => nest(values.slice(i * stride, (i + 1) * stride), rest, depth - 1));
}
