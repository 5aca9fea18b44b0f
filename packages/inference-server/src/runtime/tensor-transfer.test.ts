import type { Tensor } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { forTransfer } from './tensor-transfer.ts';

function dataOf<T extends Tensor['data']>(t: Tensor | undefined): T {
  if (!t) throw new Error('missing tensor');
  return t.data as T;
}

const fp32 = (data: Float32Array): Tensor => ({ name: 'x', datatype: 'FP32', shape: [data.length], data });

describe('forTransfer', () => {
  it('moves a typed array that is the sole view of its buffer, without a copy', () => {
    const data = new Float32Array([1, 2, 3]);
    const { tensors, transfer } = forTransfer([fp32(data)]);
    expect(tensors[0]?.data).toBe(data);
    expect(transfer).toEqual([data.buffer]);
  });

  it('moves a view into a larger buffer whole: it keeps its offset on the other side, no byte copied', () => {
    const body = new Float32Array([9, 1, 2, 3, 9]);
    const view = body.subarray(1, 4);
    const { tensors, transfer } = forTransfer([fp32(view), fp32(body.subarray(4))]);
    expect(transfer).toEqual([body.buffer]);
    const [a, b] = structuredClone(tensors, { transfer });
    expect([...dataOf<Float32Array>(a)]).toEqual([1, 2, 3]);
    expect(dataOf<Float32Array>(a).byteOffset).toBe(4);
    expect([...dataOf<Float32Array>(b)]).toEqual([9]);
    expect(dataOf<Float32Array>(b).buffer).toBe(dataOf<Float32Array>(a).buffer);
    expect(body.length).toBe(0);
  });

  it('copies only the bytes of a view its owner keeps: the buffer stays whole for its other users', () => {
    const body = new Float32Array([9, 1, 2, 3, 9]);
    const view = body.subarray(1, 4);
    const { tensors, transfer } = forTransfer([fp32(view)], false);
    const sent = tensors[0]?.data as Float32Array;
    expect([...sent]).toEqual([1, 2, 3]);
    expect(sent.buffer.byteLength).toBe(12);
    expect(transfer).toEqual([sent.buffer]);
    structuredClone(tensors, { transfer });
    expect([...body]).toEqual([9, 1, 2, 3, 9]);
  });

  it("never moves Node's pooled Buffer slab", () => {
    const small = Buffer.from([1, 2, 3]);
    expect(small.buffer.byteLength).toBe(Buffer.poolSize);
    const { tensors, transfer } = forTransfer([{ name: 'b', datatype: 'UINT8', shape: [3], data: small }]);
    const [received] = structuredClone(tensors, { transfer });
    expect([...small]).toEqual([1, 2, 3]);
    expect([...dataOf<Uint8Array>(received)]).toEqual([1, 2, 3]);
  });

  it('copies what its owner keeps (move false), and a Buffer becomes a plain Uint8Array', () => {
    const kept = new Float32Array([1, 2]);
    const bytes = Buffer.from([1, 2, 3]);
    const { tensors, transfer } = forTransfer(
      [fp32(kept), { name: 'b', datatype: 'UINT8', shape: [3], data: bytes }],
      false,
    );
    structuredClone(tensors, { transfer });
    expect([...kept]).toEqual([1, 2]);
    expect([...bytes]).toEqual([1, 2, 3]);
    expect(Buffer.isBuffer(tensors[1]?.data)).toBe(false);
    expect(tensors[1]?.data).toBeInstanceOf(Uint8Array);
  });

  it('transfers a buffer shared by two tensors once', () => {
    const data = new Float32Array([1, 2]);
    const { transfer } = forTransfer([fp32(data), fp32(data)]);
    expect(transfer).toEqual([data.buffer]);
  });

  it('leaves BYTES elements to be cloned', () => {
    const t: Tensor = { name: 's', datatype: 'BYTES', shape: [1], data: [new Uint8Array([104, 105])] };
    const { tensors, transfer } = forTransfer([t]);
    expect(tensors[0]).toBe(t);
    expect(transfer).toEqual([]);
  });
});
