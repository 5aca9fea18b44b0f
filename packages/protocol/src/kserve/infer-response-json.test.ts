import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appErrorOf } from './app-error-of.ts';
import { decodeInferResponse, encodeInferResponse, type InferResponse } from './infer-response-json.ts';
import { tensorArb } from './tensor-arbitraries.ts';

const base = { model_name: 'simple', model_version: '1' };

describe('encodeInferResponse', () => {
  it('writes the KServe V2 JSON shape', () => {
    const text = encodeInferResponse({
      ...base,
      id: 'req-1',
      parameters: { sequence_id: 7 },
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 2], data: new Int32Array([1, -2]) },
        { name: 'OUTPUT1', datatype: 'BOOL', shape: [2], data: new Uint8Array([1, 0]), parameters: { p: 'x' } },
      ],
    });
    expect(text).toBe(
      '{"model_name":"simple","model_version":"1","id":"req-1","parameters":{"sequence_id":7},"outputs":[' +
        '{"name":"OUTPUT0","datatype":"INT32","shape":[1,2],"data":[1,-2]},' +
        '{"name":"OUTPUT1","datatype":"BOOL","shape":[2],"parameters":{"p":"x"},"data":[true,false]}]}',
    );
  });

  it('writes non-finite floats as strings and exact 64-bit digits', () => {
    const text = encodeInferResponse({
      ...base,
      outputs: [
        { name: 'F', datatype: 'FP32', shape: [3], data: new Float32Array([Number.NaN, Infinity, -Infinity]) },
        { name: 'I', datatype: 'INT64', shape: [1], data: new BigInt64Array([2n ** 62n + 1n]) },
      ],
    });
    expect(text).toContain('"data":["NaN","Infinity","-Infinity"]');
    expect(text).toContain('"data":[4611686018427387905]');
  });

  it('escapes names and ids', () => {
    const text = encodeInferResponse({ model_name: 'a"b', model_version: '1', id: 'x\ny', outputs: [] });
    expect(JSON.parse(text)).toEqual({ model_name: 'a"b', model_version: '1', id: 'x\ny', outputs: [] });
  });

  it('refuses BF16 outputs', () => {
    const err = appErrorOf(() =>
      encodeInferResponse({
        ...base,
        outputs: [{ name: 'B', datatype: 'BF16', shape: [1], data: new Uint16Array(1) }],
      }),
    );
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain("output 'B': BF16");
    expect(err.message).toContain('binary_data_output');
  });

  it('refuses data that does not fill the shape', () => {
    const err = appErrorOf(() =>
      encodeInferResponse({
        ...base,
        outputs: [{ name: 'O', datatype: 'FP32', shape: [2, 2], data: new Float32Array(3) }],
      }),
    );
    expect(err.code).toBe('INTERNAL');
    expect(err.message).toBe("output 'O': shape [2,2] needs 4 elements, data has 3");
  });
});

describe('decodeInferResponse', () => {
  it('reads text and parsed objects alike', () => {
    const json = {
      ...base,
      outputs: [{ name: 'O', datatype: 'FP16', shape: [2], data: [[1], [0.5]].flat() }],
    };
    const expected: InferResponse = {
      ...base,
      outputs: [{ name: 'O', datatype: 'FP16', shape: [2], data: new Uint16Array([0x3c00, 0x3800]) }],
    };
    expect(decodeInferResponse(json)).toEqual(expected);
    expect(decodeInferResponse(JSON.stringify(json))).toEqual(expected);
  });

  it('keeps 64-bit integers beyond 2^53 exact when reading text', () => {
    const res = decodeInferResponse(
      '{"model_name":"m","model_version":"1","outputs":[' +
        '{"name":"I","datatype":"INT64","shape":[2],"data":[-9223372036854775808,9007199254740993]},' +
        '{"name":"F","datatype":"FP64","shape":[1],"data":[100000000000000000000]}]}',
    );
    expect(res.outputs[0]?.data).toEqual(new BigInt64Array([-(2n ** 63n), 2n ** 53n + 1n]));
    expect(res.outputs[1]?.data).toEqual(new Float64Array([1e20]));
  });

  it.each<[string, string | object, string]>([
    ['malformed text', '{"model_name":', 'infer response is not valid JSON'],
    ['a missing model_name', { model_version: '1', outputs: [] }, "infer response: 'model_name': "],
    [
      'a numeric model_version',
      { model_name: 'm', model_version: 1, outputs: [] },
      "infer response: 'model_version': ",
    ],
    [
      'an output with a bad value',
      { ...base, outputs: [{ name: 'O', datatype: 'UINT8', shape: [1], data: [256] }] },
      "output 'O': element 0: 256 is out of range for UINT8",
    ],
    [
      'an output without data',
      { ...base, outputs: [{ name: 'O', datatype: 'UINT8', shape: [1] }] },
      "output 'O': missing 'data'",
    ],
  ])('rejects %s', (_case, json, message) => {
    const err = appErrorOf(() => decodeInferResponse(json));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain(message);
  });
});

describe('hostile parameter names', () => {
  it('drops a `__proto__` parameter instead of letting it reach any prototype', () => {
    const decoded = decodeInferResponse(
      '{"model_name":"m","model_version":"1","parameters":{"__proto__":{"polluted":1},"x":1},"outputs":[]}',
    );
    expect(decoded.parameters).toEqual({ x: 1 });
    expect(Object.hasOwn(decoded.parameters ?? {}, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('JSON response round trip', () => {
  it('decodeInferResponse(encodeInferResponse(res)) equals res for every JSON datatype', () => {
    const responseArb = fc.record(
      {
        model_name: fc.string({ minLength: 1 }),
        model_version: fc.stringMatching(/^[0-9]{1,3}$/),
        id: fc.string(),
        // `__proto__` is never a parameter: decoding drops it (see the prototype-pollution test below).
        parameters: fc.dictionary(
          fc.string().filter((k) => k !== '__proto__'),
          fc.oneof(fc.string(), fc.integer(), fc.boolean()),
        ),
        outputs: fc.array(tensorArb, { maxLength: 4 }),
      },
      { requiredKeys: ['model_name', 'model_version', 'outputs'] },
    );
    fc.assert(
      fc.property(responseArb, (generated) => {
        const res: InferResponse = {
          ...generated,
          outputs: generated.outputs.map((t, i) => ({ ...t, name: `OUTPUT${i}` })),
        };
        const text = encodeInferResponse(res);
        expect(() => JSON.parse(text)).not.toThrow();
        expect(decodeInferResponse(text)).toEqual(res);
      }),
      { numRuns: 300 },
    );
  });
});
