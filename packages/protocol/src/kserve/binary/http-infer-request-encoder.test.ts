import { describe, expect, it } from 'vitest';
import { appErrorOf } from '../app-error-of.ts';
import type { InferRequest } from '../infer-request-json.ts';
import { encodeHttpInferRequest } from './http-infer-request-encoder.ts';

const req: InferRequest = {
  id: 'q',
  parameters: { priority: 1 },
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: new Int32Array([1, 2]) },
    { name: 'INPUT1', datatype: 'BOOL', shape: [2], data: Uint8Array.from([1, 0]), parameters: { p: 'x' } },
  ],
  outputs: [{ name: 'OUTPUT0' }],
};

describe('encodeHttpInferRequest', () => {
  it('writes plain JSON without a header when no input is binary', () => {
    const out = encodeHttpInferRequest(req);
    expect(out.inferenceHeaderContentLength).toBeUndefined();
    expect(JSON.parse(out.body.toString())).toEqual({
      id: 'q',
      parameters: { priority: 1 },
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: [1, 2] },
        { name: 'INPUT1', datatype: 'BOOL', shape: [2], parameters: { p: 'x' }, data: [true, false] },
      ],
      outputs: [{ name: 'OUTPUT0' }],
    });
  });

  it('moves the chosen inputs to the binary part and sets the output parameters', () => {
    const out = encodeHttpInferRequest(req, {
      binaryInputs: new Set(['INPUT1']),
      binaryDataOutput: true,
      outputs: [{ name: 'OUTPUT0', binary_data: false }, { name: 'OUTPUT1', classification: 3 }, { name: 'OUTPUT2' }],
    });
    const n = out.inferenceHeaderContentLength as number;
    expect(n).toBeGreaterThan(0);
    expect(JSON.parse(out.body.subarray(0, n).toString())).toEqual({
      id: 'q',
      parameters: { priority: 1, binary_data_output: true },
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 2], data: [1, 2] },
        { name: 'INPUT1', datatype: 'BOOL', shape: [2], parameters: { p: 'x', binary_data_size: 2 } },
      ],
      outputs: [
        { name: 'OUTPUT0', parameters: { binary_data: false } },
        { name: 'OUTPUT1', parameters: { classification: 3 } },
        { name: 'OUTPUT2' },
      ],
    });
    expect([...out.body.subarray(n)]).toEqual([1, 0]);
  });

  it('sends a header even when the binary inputs are empty', () => {
    const empty: InferRequest = { inputs: [{ name: 'E', datatype: 'FP32', shape: [0], data: new Float32Array(0) }] };
    const out = encodeHttpInferRequest(empty, { binaryInputs: true });
    expect(out.inferenceHeaderContentLength).toBe(out.body.byteLength);
  });

  it('refuses BF16 as JSON', () => {
    const bf16: InferRequest = { inputs: [{ name: 'B', datatype: 'BF16', shape: [1], data: new Uint16Array(1) }] };
    expect(appErrorOf(() => encodeHttpInferRequest(bf16)).message).toBe(
      "input 'B': BF16 inputs have no JSON form; send them binary",
    );
  });
});
