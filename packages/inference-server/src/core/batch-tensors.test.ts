import { AppError, FIXED_ARRAY_CLASS, type Tensor, type TensorSpec } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { batchKey, concatRequests, concatRows, splitOutputs, splitRows } from './batch-tensors.ts';

const fp32 = (name: string, shape: number[], values?: number[]): Tensor => ({
  name,
  datatype: 'FP32',
  shape,
  data: Float32Array.from(values ?? Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => i)),
});
const bytes = (name: string, texts: string[]): Tensor => ({
  name,
  datatype: 'BYTES',
  shape: [texts.length, 1],
  data: texts.map((t) => new TextEncoder().encode(t)),
});
const text = (t: Tensor | undefined) => ((t?.data ?? []) as Uint8Array[]).map((b) => new TextDecoder().decode(b));
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
  }
};

const specs: TensorSpec[] = [
  { name: 'A', datatype: 'FP32', shape: [-1, 3] },
  { name: 'B', datatype: 'FP32', shape: [-1, -1] },
];

describe('batchKey', () => {
  it('is the same for requests that can share a batch, whatever their rows and input order', () => {
    const one = batchKey([fp32('A', [1, 3]), fp32('B', [1, 2])], 1, undefined, specs);
    const three = batchKey([fp32('B', [3, 2]), fp32('A', [3, 3])], 3, [], specs);
    expect(one).toBeDefined();
    expect(three).toBe(one);
  });

  it('differs by non-batch dimensions and requested outputs', () => {
    const base = batchKey([fp32('A', [1, 3]), fp32('B', [1, 2])], 1, ['Y'], specs);
    expect(batchKey([fp32('A', [1, 3]), fp32('B', [1, 5])], 1, ['Y'], specs)).not.toBe(base);
    expect(batchKey([fp32('A', [1, 3]), fp32('B', [1, 2])], 1, undefined, specs)).not.toBe(base);
    expect(batchKey([fp32('A', [1, 3]), fp32('B', [1, 2])], 1, ['Y', 'Z'], specs)).not.toBe(base);
  });

  it('keeps anything the model would refuse out of merged batches', () => {
    const b = fp32('B', [1, 2]);
    const cases: [string, Tensor[], number][] = [
      ['a missing input', [fp32('A', [1, 3])], 1],
      ['an unknown input', [fp32('A', [1, 3]), fp32('C', [1, 2])], 1],
      ['a duplicated input', [fp32('A', [1, 3]), fp32('A', [1, 3])], 1],
      ['a wrong datatype', [{ ...fp32('A', [1, 3]), datatype: 'FP64', data: new Float64Array(3) }, b], 1],
      ['a wrong fixed dimension', [fp32('A', [1, 4]), b], 1],
      ['a wrong rank', [fp32('A', [1, 3, 1]), b], 1],
      ['an element count that does not fit the shape', [{ ...fp32('A', [1, 3]), data: new Float32Array(2) }, b], 1],
      ['storage of another type', [{ ...fp32('A', [1, 3]), data: new Int32Array(3) }, b], 1],
      ['inputs that disagree on rows', [fp32('A', [2, 3]), b], 2],
      ['no rows', [fp32('A', [0, 3]), fp32('B', [0, 2])], 0],
    ];
    for (const [why, inputs, rows] of cases) expect(batchKey(inputs, rows, undefined, specs), why).toBeUndefined();
    // A model whose first dimension is fixed cannot take more rows than it declares.
    const fixed: TensorSpec[] = [{ name: 'A', datatype: 'FP32', shape: [1, 3] }];
    expect(batchKey([fp32('A', [1, 3])], 1, undefined, fixed)).toBeUndefined();
  });
});

describe('concatRows and splitRows', () => {
  it('joins along dim 0 into a fresh buffer that spans its whole ArrayBuffer (transferable)', () => {
    // Views at an offset into a larger buffer, as the binary codec produces.
    const backing = new Int32Array([99, 1, 2, 3, 4, 5, 6, 98]);
    const a: Tensor = { name: 'X', datatype: 'INT32', shape: [1, 2], data: backing.subarray(1, 3) };
    const b: Tensor = { name: 'X', datatype: 'INT32', shape: [2, 2], data: backing.subarray(3, 7) };
    const joined = concatRows([a, b]);
    expect(joined.shape).toEqual([3, 2]);
    expect(Array.from(joined.data as Int32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    const data = joined.data as Int32Array;
    expect(data).toBeInstanceOf(Int32Array);
    expect(data.byteOffset).toBe(0);
    expect(data.buffer.byteLength).toBe(data.byteLength);
    expect(data.buffer).not.toBe(backing.buffer);
  });

  it('round-trips every fixed-size datatype through join and split', () => {
    for (const [datatype, Class] of Object.entries(FIXED_ARRAY_CLASS)) {
      const part = (rows: number, seed: number): Tensor => {
        const data = new Class(rows * 2);
        for (let i = 0; i < data.length; i++) {
          const v = (seed + i) % 2;
          if (data instanceof BigInt64Array || data instanceof BigUint64Array) data[i] = BigInt(v);
          else data[i] = v;
        }
        return { name: 'T', datatype: datatype as Tensor['datatype'], shape: [rows, 2], data };
      };
      const parts = [part(1, 0), part(3, 1), part(2, 0)];
      const back = splitRows(concatRows(parts), [1, 3, 2]);
      expect(back.map((t) => t.shape)).toEqual(parts.map((t) => t.shape));
      expect(back.map((t) => Array.from(t.data as ArrayLike<unknown>))).toEqual(
        parts.map((t) => Array.from(t.data as ArrayLike<unknown>)),
      );
      expect(back[0]?.data).toBeInstanceOf(Class);
    }
  });

  it('joins and splits BYTES tensors', () => {
    const joined = concatRows([bytes('S', ['a']), bytes('S', ['bb', 'ccc'])]);
    expect(joined.shape).toEqual([3, 1]);
    expect(text(joined)).toEqual(['a', 'bb', 'ccc']);
    const [first, second] = splitRows(joined, [2, 1]);
    expect(text(first)).toEqual(['a', 'bb']);
    expect(second?.shape).toEqual([1, 1]);
    expect(text(second)).toEqual(['ccc']);
  });

  it('refuses to join tensors that differ beyond the batch dimension', () => {
    expect(codeOf(() => concatRows([fp32('X', [1, 3]), fp32('X', [1, 4])]))).toMatch(/^INTERNAL: cannot join/);
    expect(codeOf(() => concatRows([fp32('X', [1, 3]), fp32('Y', [1, 3])]))).toMatch(/^INTERNAL: cannot join/);
  });

  it('says when an output is not batch-major over the batch rows', () => {
    expect(codeOf(() => splitRows(fp32('Y', [1, 3]), [1, 2]))).toBe(
      "INTERNAL: model output 'Y' has shape [1,3], not batch-major over the batch's 3 rows",
    );
    expect(codeOf(() => splitRows({ ...fp32('Y', []), shape: [] }, [1]))).toMatch(/not batch-major/);
  });
});

describe('concatRequests and splitOutputs', () => {
  it('joins requests by input name and gives each request its own rows of every output, in order', () => {
    const r1 = [fp32('A', [1, 2], [1, 2]), fp32('B', [1, 1], [10])];
    const r2 = [fp32('B', [2, 1], [20, 30]), fp32('A', [2, 2], [3, 4, 5, 6])];
    const [a, b] = concatRequests([r1, r2]);
    expect(a?.name).toBe('A');
    expect(Array.from(a?.data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(Array.from(b?.data as Float32Array)).toEqual([10, 20, 30]);
    const perRequest = splitOutputs([fp32('Y', [3, 1], [7, 8, 9]), bytes('Z', ['x', 'y', 'z'])], [1, 2]);
    expect(perRequest.map((outs) => outs.map((t) => t.name))).toEqual([
      ['Y', 'Z'],
      ['Y', 'Z'],
    ]);
    expect(Array.from(perRequest[1]?.[0]?.data as Float32Array)).toEqual([8, 9]);
    expect(text(perRequest[1]?.[1])).toEqual(['y', 'z']);
  });
});
