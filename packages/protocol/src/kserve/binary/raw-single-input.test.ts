import { describe, expect, it } from 'vitest';
import { appErrorOf } from '../app-error-of.ts';
import type { Tensor } from '../tensor.ts';
import { type DecodeHttpInferRequestOptions, decodeHttpInferRequest } from './http-infer-request.ts';
import type { RawInputSpec } from './raw-single-input.ts';

// Through decodeHttpInferRequest, as the route calls it: header 0 is what selects raw mode.
function decode(body: Uint8Array, header: string, opts?: DecodeHttpInferRequestOptions) {
  return decodeHttpInferRequest(body, { inferenceHeaderContentLength: header }, opts);
}

function invalid(body: Uint8Array, header: string, opts?: DecodeHttpInferRequestOptions): string {
  const err = appErrorOf(() => decode(body, header, opts));
  expect(err.code).toBe('INVALID_ARGUMENT');
  return err.message;
}

const le = {
  i32: (...v: number[]) => Buffer.from(new Int32Array(v).buffer),
  f32: (...v: number[]) => Buffer.from(new Float32Array(v).buffer),
};

describe('decodeHttpInferRequest: raw single-input mode (header 0)', () => {
  const raw = (body: Uint8Array, singleInput?: DecodeHttpInferRequestOptions['singleInput'], maxElements?: number) =>
    decode(body, '0', { singleInput, maxElements });
  const rawInvalid = (body: Uint8Array, singleInput?: DecodeHttpInferRequestOptions['singleInput']) =>
    invalid(body, '0', { singleInput });
  const tensor = (req: { inputs: Tensor[] }) => req.inputs[0];

  it('reads the whole body as the only input, batch dimension fixed to 1', () => {
    const body = le.i32(...Array(16).keys());
    const req = raw(body, { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16], batched: true });
    expect(req).toEqual({
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from(Array(16).keys()) }],
    });
    expect(
      rawInvalid(Buffer.concat([body, body]), { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16], batched: true }),
    ).toBe("input 'INPUT0': raw body has 128 bytes, shape [1,16] of INT32 needs 64");
  });

  it('deduces the one variable dimension from the body length', () => {
    const spec: RawInputSpec = { name: 'X', datatype: 'FP32', shape: [-1, -1, 2], batched: true };
    expect(tensor(raw(le.f32(1, 2, 3, 4, 5, 6), spec))?.shape).toEqual([1, 3, 2]);
    expect(tensor(raw(le.f32(1, 2, 3), { name: 'X', datatype: 'FP32', shape: [-1] }))).toEqual({
      name: 'X',
      datatype: 'FP32',
      shape: [3],
      data: new Float32Array([1, 2, 3]),
    });
    expect(tensor(raw(new Uint8Array(0), { name: 'X', datatype: 'FP32', shape: [-1, 0] }))?.shape).toEqual([0, 0]);
    expect(rawInvalid(new Uint8Array(6), { name: 'X', datatype: 'FP32', shape: [-1, 2] })).toBe(
      "input 'X': raw body of 6 bytes is not a whole number of FP32 rows of 8 bytes for shape [-1,2]",
    );
  });

  it('reads any all-zero header value as raw mode', () => {
    const spec: RawInputSpec = { name: 'X', datatype: 'INT32', shape: [1] };
    expect(decode(le.i32(7), ' 00 ', { singleInput: spec }).inputs[0]?.data).toEqual(new Int32Array([7]));
  });

  it('refuses more than one variable dimension', () => {
    expect(rawInvalid(new Uint8Array(8), { name: 'X', datatype: 'FP32', shape: [-1, -1] })).toBe(
      "The shape of the raw input 'X' can not be deduced because there are more than one variable-sized dimension",
    );
  });

  it('takes the body as the one BYTES element, without a length prefix', () => {
    const body = Buffer.from('\x00\xffraw');
    expect(raw(body, { name: 'S', datatype: 'BYTES', shape: [1] })).toEqual({
      inputs: [{ name: 'S', datatype: 'BYTES', shape: [1], data: [new Uint8Array(body)] }],
    });
    expect(tensor(raw(body, { name: 'S', datatype: 'BYTES', shape: [-1, 1], batched: true }))?.shape).toEqual([1, 1]);
    expect(tensor(raw(new Uint8Array(0), { name: 'S', datatype: 'BYTES', shape: [1] }))?.data).toEqual([
      new Uint8Array(0),
    ]);
    expect(rawInvalid(body, { name: 'S', datatype: 'BYTES', shape: [-1] })).toBe(
      "input 'S': for BYTES datatype raw input, the model must have input shape [1], has [-1]",
    );
    expect(rawInvalid(body, { name: 'S', datatype: 'BYTES', shape: [-1, 2], batched: true })).toContain('has [2]');
  });

  it('refuses a raw request for a model without exactly one input', () => {
    expect(rawInvalid(le.i32(1))).toMatch(
      /^Raw request \(Inference-Header-Content-Length: 0\) must be for a model with exactly one input/,
    );
  });

  it('decodes a raw body at an odd offset and checks BOOL bytes and the element limit', () => {
    const backing = Buffer.alloc(9);
    backing.writeFloatLE(4.5, 1);
    backing.writeFloatLE(-1, 5);
    expect(tensor(raw(backing.subarray(1), { name: 'X', datatype: 'FP32', shape: [2] }))?.data).toEqual(
      new Float32Array([4.5, -1]),
    );
    expect(rawInvalid(Buffer.from([0, 3]), { name: 'B', datatype: 'BOOL', shape: [-1] })).toContain(
      'BOOL element 1 is byte 3',
    );
    expect(appErrorOf(() => raw(new Uint8Array(40), { name: 'X', datatype: 'INT8', shape: [-1] }, 8)).message).toBe(
      "input 'X': shape [40] has too many elements (limit 8)",
    );
  });
});
