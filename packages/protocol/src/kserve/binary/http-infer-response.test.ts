import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appErrorOf } from '../app-error-of.ts';
import { encodeInferResponse, type InferResponse } from '../infer-response-json.ts';
import { mixedResponseArb } from './binary-arbitraries.ts';
import { decodeHttpInferResponse, encodeHttpInferResponse } from './http-infer-response.ts';

const base = { model_name: 'simple', model_version: '1' };
const res: InferResponse = {
  ...base,
  id: 'r1',
  outputs: [
    { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 2], data: new Int32Array([1, -2]) },
    { name: 'OUTPUT1', datatype: 'BYTES', shape: [2], data: [Uint8Array.from([0x61]), new Uint8Array(0)] },
  ],
};

/** Splits a binary response body the way a client reads it. */
function split(out: { body: Buffer; inferenceHeaderContentLength?: number }) {
  const n = out.inferenceHeaderContentLength ?? out.body.byteLength;
  return { json: JSON.parse(out.body.subarray(0, n).toString()), rest: out.body.subarray(n) };
}

describe('encodeHttpInferResponse', () => {
  it('answers plain JSON when no output is binary', () => {
    const out = encodeHttpInferResponse(res);
    expect(out.contentType).toBe('application/json');
    expect(out.inferenceHeaderContentLength).toBeUndefined();
    expect(out.body.toString()).toBe(encodeInferResponse(res));
  });

  it('puts binary outputs after the JSON in output order, with binary_data_size and no data', () => {
    const out = encodeHttpInferResponse(res, { binaryDataOutput: true });
    expect(out.contentType).toBe('application/octet-stream');
    const { json, rest } = split(out);
    expect(json).toEqual({
      ...base,
      id: 'r1',
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 2], parameters: { binary_data_size: 8 } },
        { name: 'OUTPUT1', datatype: 'BYTES', shape: [2], parameters: { binary_data_size: 9 } },
      ],
    });
    expect([...rest]).toEqual([1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0x61, 0, 0, 0, 0]);
  });

  it("lets an output's binary_data override binary_data_output, either way", () => {
    const mixed = split(
      encodeHttpInferResponse(res, { binaryDataOutput: true, outputBinary: new Map([['OUTPUT1', false]]) }),
    );
    expect(mixed.json.outputs[0]).toEqual({
      name: 'OUTPUT0',
      datatype: 'INT32',
      shape: [1, 2],
      parameters: { binary_data_size: 8 },
    });
    expect(mixed.json.outputs[1]).toEqual({ name: 'OUTPUT1', datatype: 'BYTES', shape: [2], data: ['a', ''] });
    expect(mixed.rest.byteLength).toBe(8);
    const one = split(encodeHttpInferResponse(res, { outputBinary: new Map([['OUTPUT1', true]]) }));
    expect(one.json.outputs[0].data).toEqual([1, -2]);
    expect(one.json.outputs[1].parameters).toEqual({ binary_data_size: 9 });
  });

  it('makes every output binary for a raw single-input request', () => {
    const out = encodeHttpInferResponse(res, {
      rawSingleInput: true,
      binaryDataOutput: false,
      outputBinary: new Map([['OUTPUT0', false]]),
    });
    expect(split(out).json.outputs.every((o: { data?: unknown }) => o.data === undefined)).toBe(true);
  });

  it('refuses BF16 as JSON and sends it binary', () => {
    const bf16: InferResponse = {
      ...base,
      outputs: [{ name: 'B', datatype: 'BF16', shape: [1], data: new Uint16Array([0x3f80]) }],
    };
    const err = appErrorOf(() =>
      encodeHttpInferResponse(bf16, { binaryDataOutput: true, outputBinary: new Map([['B', false]]) }),
    );
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe(
      `output 'B': BF16 tensors cannot be returned as JSON; request the output with "binary_data": true (or the request with "binary_data_output": true)`,
    );
    expect([...split(encodeHttpInferResponse(bf16, { binaryDataOutput: true })).rest]).toEqual([0x80, 0x3f]);
  });

  it('refuses non-UTF-8 BYTES as JSON', () => {
    const bytes: InferResponse = {
      ...base,
      outputs: [{ name: 'S', datatype: 'BYTES', shape: [1], data: [Uint8Array.from([0xff])] }],
    };
    expect(appErrorOf(() => encodeHttpInferResponse(bytes)).message).toContain(
      "output 'S': element 0 is not valid UTF-8",
    );
    expect(
      appErrorOf(() =>
        encodeHttpInferResponse(
          { ...bytes, outputs: [...bytes.outputs, ...res.outputs] },
          { outputBinary: new Map([['OUTPUT0', true]]) },
        ),
      ).code,
    ).toBe('INVALID_ARGUMENT');
  });

  it('keeps other output parameters and replaces a stale binary_data_size', () => {
    const stale: InferResponse = {
      ...base,
      outputs: [
        {
          name: 'O',
          datatype: 'INT8',
          shape: [1],
          data: new Int8Array([5]),
          parameters: { binary_data_size: 99, p: 1 },
        },
      ],
    };
    expect(split(encodeHttpInferResponse(stale, { binaryDataOutput: true })).json.outputs[0].parameters).toEqual({
      p: 1,
      binary_data_size: 1,
    });
    expect(JSON.parse(encodeHttpInferResponse(stale).body.toString()).outputs[0].parameters).toEqual({ p: 1 });
  });

  it('refuses output storage that does not fill its shape', () => {
    const bad: InferResponse = {
      ...base,
      outputs: [{ name: 'O', datatype: 'FP32', shape: [3], data: new Float32Array(2) }],
    };
    expect(appErrorOf(() => encodeHttpInferResponse(bad, { binaryDataOutput: true })).code).toBe('INTERNAL');
    const mixed: InferResponse = { ...base, outputs: [res.outputs[0]!, ...bad.outputs] };
    expect(
      appErrorOf(() => encodeHttpInferResponse(mixed, { outputBinary: new Map([['OUTPUT0', true]]) })).message,
    ).toBe("output 'O': shape [3] needs 3 elements, data has 2");
  });
});

describe('decodeHttpInferResponse', () => {
  it('round-trips any outputs with any binary/JSON choice per output', () => {
    fc.assert(
      fc.property(mixedResponseArb, ({ res, binaryDataOutput, outputBinary }) => {
        const out = encodeHttpInferResponse(res, { binaryDataOutput, outputBinary });
        const anyBinary = res.outputs.some((o) => outputBinary.get(o.name) ?? binaryDataOutput ?? false);
        expect(out.contentType).toBe(anyBinary ? 'application/octet-stream' : 'application/json');
        expect(out.inferenceHeaderContentLength === undefined).toBe(!anyBinary);
        expect(decodeHttpInferResponse(out.body, out.inferenceHeaderContentLength)).toEqual(res);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps 64-bit integers exact in JSON outputs next to binary ones', () => {
    const big: InferResponse = {
      ...base,
      outputs: [
        { name: 'I', datatype: 'INT64', shape: [2], data: new BigInt64Array([2n ** 62n + 1n, -(2n ** 63n)]) },
        { name: 'F', datatype: 'FP64', shape: [2], data: new Float64Array([1.2345678901234568e20, Number.NaN]) },
        { name: 'B', datatype: 'UINT64', shape: [1], data: new BigUint64Array([2n ** 64n - 1n]) },
      ],
    };
    const out = encodeHttpInferResponse(big, { outputBinary: new Map([['B', true]]) });
    expect(decodeHttpInferResponse(out.body, String(out.inferenceHeaderContentLength))).toEqual(big);
  });

  it('refuses truncated and over-long binary responses', () => {
    const out = encodeHttpInferResponse(res, { binaryDataOutput: true });
    const n = out.inferenceHeaderContentLength;
    const cut = appErrorOf(() => decodeHttpInferResponse(out.body.subarray(0, out.body.byteLength - 1), n));
    expect(cut.message).toBe(
      "output 'OUTPUT1': 'binary_data_size' is 9 but only 8 bytes of binary data remain (body truncated, or 'binary_data_size' too big)",
    );
    const long = appErrorOf(() => decodeHttpInferResponse(Buffer.concat([out.body, Buffer.from([0])]), n));
    expect(long.message).toBe(
      "unexpected additional output data: 1 bytes after the binary data of output 'OUTPUT1', the last binary output ('binary_data_size' too small, or trailing bytes)",
    );
    expect(appErrorOf(() => decodeHttpInferResponse(out.body, 'x')).message).toMatch(
      /^Inference-Header-Content-Length must be/,
    );
    expect(appErrorOf(() => decodeHttpInferResponse(out.body, 1.5)).code).toBe('INVALID_ARGUMENT');
  });

  it('refuses a body that is not an infer response', () => {
    const body = Buffer.from('{"model_name":"m","outputs":[]}');
    expect(appErrorOf(() => decodeHttpInferResponse(body, body.byteLength)).message).toMatch(
      /^infer response: 'model_version': /,
    );
    expect(appErrorOf(() => decodeHttpInferResponse(Buffer.from('{'))).message).toMatch(
      /^infer response body is not valid JSON/,
    );
  });
});
