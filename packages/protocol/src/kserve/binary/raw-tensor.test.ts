import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appErrorOf } from '../app-error-of.ts';
import { DATATYPES, type TensorData } from '../tensor.ts';
import { product, shapeArb } from '../tensor-arbitraries.ts';
import { binaryDataArb } from './binary-arbitraries.ts';
import { decodeBinaryTensorData, encodeBinaryTensorData } from './binary-tensor-data.ts';
import { decodeRawTensor, encodeRawTensor, type FixedDatatype, swapByteOrder } from './raw-tensor.ts';

const FIXED: FixedDatatype[] = DATATYPES.filter((d): d is FixedDatatype => d !== 'BYTES');

describe('fixed-size binary tensors', () => {
  it('round-trips every datatype at every byte offset (aligned views and unaligned copies)', () => {
    const arb = fc
      .record({ datatype: fc.constantFrom(...DATATYPES), shape: shapeArb, pad: fc.nat(9) })
      .chain((c) => binaryDataArb(c.datatype, product(c.shape)).map((data) => ({ ...c, data })));
    fc.assert(
      fc.property(arb, ({ datatype, shape, pad, data }) => {
        const encoded = encodeBinaryTensorData(datatype, shape, data, "input 'X'");
        const body = new Uint8Array(pad + encoded.byteLength);
        body.set(encoded, pad);
        const decoded = decodeBinaryTensorData(datatype, shape, body.subarray(pad), "input 'X'");
        expect(decoded).toEqual(data);
        expect(decoded.constructor).toBe(data.constructor);
      }),
    );
  });

  it('writes little-endian bytes', () => {
    expect([...encodeRawTensor('INT32', new Int32Array([1, -2]))]).toEqual([1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]);
    expect([...encodeRawTensor('FP32', new Float32Array([1]))]).toEqual([0, 0, 0x80, 0x3f]);
    expect([...encodeRawTensor('INT64', new BigInt64Array([-1n]))]).toEqual(Array(8).fill(0xff));
    expect([...encodeRawTensor('BF16', new Uint16Array([0x3f80]))]).toEqual([0x80, 0x3f]);
  });

  it('decodes an aligned slice as a view and an unaligned one as an aligned copy', () => {
    const body = new Uint8Array(12);
    new DataView(body.buffer).setFloat32(1, 1.5, true);
    new DataView(body.buffer).setFloat32(8, 2.5, true);
    const unaligned = decodeRawTensor('FP32', body.subarray(1, 5), 1, "input 'X'");
    expect(unaligned).toEqual(new Float32Array([1.5]));
    expect(unaligned.buffer).not.toBe(body.buffer);
    const aligned = decodeRawTensor('FP32', body.subarray(8, 12), 1, "input 'X'");
    expect(aligned).toEqual(new Float32Array([2.5]));
    expect(aligned.buffer).toBe(body.buffer);
  });

  it('refuses BOOL bytes other than 0 and 1', () => {
    const err = appErrorOf(() => decodeRawTensor('BOOL', Uint8Array.from([1, 0, 2]), 3, "input 'B'"));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe("input 'B': BOOL element 2 is byte 2; binary BOOL elements must be 0 or 1");
  });

  it('normalizes BOOL storage other than 0/1 when encoding', () => {
    expect([...encodeRawTensor('BOOL', Uint8Array.from([0, 1, 7]))]).toEqual([0, 1, 1]);
  });

  it('refuses a byte length that is not the shape times the element size', () => {
    for (const datatype of FIXED) {
      const err = appErrorOf(() => decodeBinaryTensorData(datatype, [2, 3], new Uint8Array(5), "input 'X'"));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(/^input 'X': shape \[2,3\] of \w+ needs \d+ bytes of binary data, got 5$/);
    }
  });

  it('checks the element limit before looking at the bytes', () => {
    const err = appErrorOf(() => decodeBinaryTensorData('FP32', [1000, 1000], new Uint8Array(4), "input 'X'", 1000));
    expect(err.message).toBe("input 'X': shape [1000,1000] has too many elements (limit 1000)");
  });

  it('refuses storage that does not match the datatype or fill the shape', () => {
    const wrongClass = appErrorOf(() => encodeBinaryTensorData('FP32', [1], new Float64Array(1), "output 'Y'"));
    expect(wrongClass.code).toBe('INTERNAL');
    expect(wrongClass.message).toBe("output 'Y': FP32 data must be a Float32Array, got Float64Array");
    const short = appErrorOf(() => encodeBinaryTensorData('INT8', [2, 2], new Int8Array(3), "output 'Y'"));
    expect(short.message).toBe("output 'Y': shape [2,2] needs 4 elements, data has 3");
    const notBytes = appErrorOf(() =>
      encodeBinaryTensorData('BYTES', [1], new Uint8Array(1) as TensorData, "output 'Y'"),
    );
    expect(notBytes.message).toBe("output 'Y': BYTES data must be an array of byte strings");
  });

  it('swaps the byte order of each element (for big-endian hosts)', () => {
    const bytes = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    swapByteOrder(bytes, 4);
    expect([...bytes]).toEqual([4, 3, 2, 1, 8, 7, 6, 5]);
    swapByteOrder(bytes, 2);
    expect([...bytes]).toEqual([3, 4, 1, 2, 7, 8, 5, 6]);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.constantFrom(1, 2, 4, 8), (data, size) => {
        const copy = new Uint8Array(data);
        swapByteOrder(copy, size);
        swapByteOrder(copy, size);
        expect(copy).toEqual(data);
      }),
    );
  });
});
