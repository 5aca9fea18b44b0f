import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appErrorOf } from './app-error-of.ts';
import type { JsonDatatype } from './decode-json-values.ts';
import { parseInferRequest } from './infer-request-json.ts';
import type { TensorData } from './tensor.ts';
import { jsonTensorCaseArb, nest } from './tensor-arbitraries.ts';

// Node 24's Float16Array is an independent oracle for FP16 rounding.
const Float16 = (globalThis as unknown as { Float16Array: new (values: number[]) => { buffer: ArrayBuffer } })
  .Float16Array;

/** What a decoded tensor must hold, built without the codec from the values as they crossed the wire. */
function expectedData(datatype: JsonDatatype, values: unknown[]): TensorData {
  const nums = values as number[];
  switch (datatype) {
    case 'BOOL':
      return Uint8Array.from(values, (v) => (v ? 1 : 0));
    case 'UINT8':
      return Uint8Array.from(nums);
    case 'UINT16':
      return Uint16Array.from(nums);
    case 'UINT32':
      return Uint32Array.from(nums);
    case 'INT8':
      return Int8Array.from(nums);
    case 'INT16':
      return Int16Array.from(nums);
    case 'INT32':
      return Int32Array.from(nums);
    case 'INT64':
      return BigInt64Array.from(nums, BigInt);
    case 'UINT64':
      return BigUint64Array.from(nums, BigInt);
    case 'FP16':
      return new Uint16Array(new Float16(nums).buffer);
    case 'FP32':
      return Float32Array.from(nums);
    case 'FP64':
      return Float64Array.from(nums);
    case 'BYTES':
      return (values as string[]).map((s) => new TextEncoder().encode(s));
  }
}

function request(input: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return { inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [2], data: [1, 2], ...input }], ...extra };
}

describe('parseInferRequest', () => {
  it('decodes a request and passes id, parameters and outputs through', () => {
    const req = parseInferRequest({
      id: 'req-1',
      parameters: { sequence_id: 7 },
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: [[1, 2, 3, 4]] },
        { name: 'INPUT1', datatype: 'BYTES', shape: [2], data: ['a', 'b'], parameters: { p: 1 } },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }],
    });
    expect(req).toEqual({
      id: 'req-1',
      parameters: { sequence_id: 7 },
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 4], data: new Int32Array([1, 2, 3, 4]) },
        {
          name: 'INPUT1',
          datatype: 'BYTES',
          shape: [2],
          data: [new Uint8Array([0x61]), new Uint8Array([0x62])],
          parameters: { p: 1 },
        },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }],
    });
  });

  it('accepts scalars and empty tensors', () => {
    const req = parseInferRequest({
      inputs: [
        { name: 'S', datatype: 'FP32', shape: [], data: [1.5] },
        { name: 'E', datatype: 'FP32', shape: [2, 0], data: [] },
      ],
    });
    expect(req.inputs.map((t) => t.data)).toEqual([new Float32Array([1.5]), new Float32Array([])]);
  });

  it.each([[null], [[]], ['text'], [42]])('rejects a body that is not an object: %j', (body) => {
    const err = appErrorOf(() => parseInferRequest(body));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe('infer request must be a JSON object');
  });

  it.each([{}, { inputs: [] }, { inputs: {} }])('rejects missing or empty inputs: %j', (body) => {
    const err = appErrorOf(() => parseInferRequest(body));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe("infer request must have a non-empty 'inputs' array");
  });

  it('rejects duplicate input names', () => {
    const input = { name: 'INPUT0', datatype: 'INT32', shape: [1], data: [1] };
    const err = appErrorOf(() => parseInferRequest({ inputs: [input, input] }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe("duplicate input name 'INPUT0'");
  });

  it.each<[string, unknown, string]>([
    ['a shape with a string', request({ shape: [1, 'x'] }), "input 'INPUT0': 'shape[1]': "],
    ['a tensor without a name', { inputs: [{ datatype: 'INT32', shape: [1], data: [1] }] }, "inputs[0]: 'name': "],
    ['a numeric id', request({}, { id: 5 }), "infer request: 'id': "],
    ['an output without a name', request({}, { outputs: [{}] }), "outputs[0]: 'name': "],
    ['parameters that are not an object', request({ parameters: 3 }), "input 'INPUT0': 'parameters': "],
  ])('rejects %s, naming where', (_case, body, prefix) => {
    const err = appErrorOf(() => parseInferRequest(body));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message.startsWith(prefix)).toBe(true);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown datatype', { datatype: 'FLOAT32' }, "input 'INPUT0': unknown datatype 'FLOAT32'"],
    ['BF16', { datatype: 'BF16' }, "input 'INPUT0': BF16 tensors must use the binary tensor data extension"],
    ['a negative dimension', { shape: [-1, 2] }, "input 'INPUT0': invalid shape [-1,2]"],
    ['a fractional dimension', { shape: [1.5] }, "input 'INPUT0': invalid shape [1.5]"],
    ['an overflowing count', { shape: [2 ** 30, 2 ** 30, 2 ** 30] }, 'has too many elements'],
    ['a missing data field', { data: undefined }, "input 'INPUT0': missing 'data'"],
    ['data that is not an array', { data: 'abc' }, "input 'INPUT0': 'data' must be an array"],
    [
      'too few elements',
      { shape: [1, 16], data: new Array(15).fill(0) },
      "input 'INPUT0': expected 16 elements (shape [1,16]), got 15",
    ],
    ['ragged nested data', { shape: [2, 2], data: [[1], [2, 3, 4]] }, "nested 'data' does not match shape [2,2]"],
    ['a string for INT32', { data: [1, 'x'] }, `input 'INPUT0': element 1: expected an integer for INT32, got "x"`],
    ['a fraction for INT32', { data: [1, 2.5] }, 'expected an integer for INT32, got 2.5'],
    ['300 for UINT8', { datatype: 'UINT8', data: [300, 1] }, '300 is out of range for UINT8'],
    ['-1 for UINT32', { datatype: 'UINT32', data: [-1, 1] }, '-1 is out of range for UINT32'],
    ['a number for BOOL', { datatype: 'BOOL', data: [1, 0] }, 'expected true or false for BOOL, got 1'],
    ['a number for BYTES', { datatype: 'BYTES', data: ['a', 1] }, 'expected a string for BYTES, got 1'],
    ['an unsafe INT64', { datatype: 'INT64', data: [1, 2 ** 60] }, 'binary tensor data extension'],
  ])('rejects %s', (_case, input, message) => {
    const err = appErrorOf(() => parseInferRequest(request(input)));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain(message);
  });

  it('checks maxElements against the shape before looking at data', () => {
    const err = appErrorOf(() => parseInferRequest(request({ shape: [4, 4] }), { maxElements: 8 }));
    expect(err.message).toBe("input 'INPUT0': shape [4,4] has too many elements (limit 8)");
    // 2^27 elements are under the default limit; a cheap rejection shows nothing was sized to them.
    const big = appErrorOf(() => parseInferRequest(request({ shape: [2 ** 27], data: [1] })));
    expect(big.message).toBe("input 'INPUT0': expected 134217728 elements (shape [134217728]), got 1");
  });

  it('decodes any valid tensor the same from flat and from nested data', () => {
    fc.assert(
      fc.property(fc.array(jsonTensorCaseArb, { minLength: 1, maxLength: 3 }), fc.nat(), (cases, depthSeed) => {
        const inputs = cases.map((c, i) => ({ name: `INPUT${i}`, datatype: c.datatype, shape: c.shape }));
        // Through JSON text, as on the wire: -0 becomes 0, strings are re-read.
        const flat = JSON.parse(JSON.stringify({ inputs: cases.map((c, i) => ({ ...inputs[i], data: c.values })) }));
        const nested = JSON.parse(
          JSON.stringify({
            inputs: cases.map((c, i) => {
              const depth = c.shape.length === 0 ? 0 : depthSeed % c.shape.length;
              return { ...inputs[i], data: nest(c.values, c.shape, depth) };
            }),
          }),
        );
        const expected = cases.map((c, i) => ({
          ...inputs[i],
          data: expectedData(c.datatype, flat.inputs[i].data),
        }));
        expect(parseInferRequest(flat).inputs).toEqual(expected);
        expect(parseInferRequest(nested).inputs).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
