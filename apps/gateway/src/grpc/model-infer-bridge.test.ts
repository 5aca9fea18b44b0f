import { decodeModelInferRequest } from '@nvcf/kserve-grpc';
import {
  AppError,
  decodeHttpInferRequest,
  encodeHttpInferResponse,
  PROBLEM_CONTENT_TYPE,
  problem,
} from '@nvcf/protocol';
import type { FunctionVersion, InvocationResult } from '@nvcf/queue';
import { describe, expect, it } from 'vitest';
import { BINARY_HEADER, checkModel, decodeInferResult, encodeQueuedInfer } from './model-infer-bridge.ts';

const raw = (values: number[]) => Buffer.from(Int32Array.from(values).buffer);

/** What the worker receives: the job body decoded as the worker's queue processor decodes it. */
function asWorkerSees(queued: ReturnType<typeof encodeQueuedInfer>) {
  expect(queued.input.kind).toBe('bytes');
  const body = Buffer.from((queued.input as { base64: string }).base64, 'base64');
  return decodeHttpInferRequest(body, { inferenceHeaderContentLength: queued.headers[BINARY_HEADER] });
}

describe('encodeQueuedInfer', () => {
  it('carries raw inputs as the binary extension with every output binary', () => {
    const req = decodeModelInferRequest({
      model_name: 'simple',
      model_version: '',
      id: 'x1',
      parameters: {},
      inputs: [
        { name: 'A', datatype: 'INT32', shape: ['1', '2'], parameters: {}, contents: null },
        { name: 'B', datatype: 'BYTES', shape: ['1'], parameters: {}, contents: null },
      ],
      outputs: [],
      raw_input_contents: [raw([7, -8]), Buffer.from([2, 0, 0, 0, 0x68, 0x69])],
    });
    const queued = encodeQueuedInfer(req, { 'x-trace': 't', [BINARY_HEADER]: '999' });
    expect(queued.headers['x-trace']).toBe('t');
    const seen = asWorkerSees(queued);
    expect(seen.id).toBe('x1');
    expect(seen.parameters).toEqual({ binary_data_output: true });
    expect(seen.outputs).toBeUndefined();
    expect([...(seen.inputs[0]!.data as Int32Array)]).toEqual([7, -8]);
    expect((seen.inputs[1]!.data as Uint8Array[]).map((b) => Buffer.from(b).toString())).toEqual(['hi']);
  });

  it('keeps classification on requested outputs and 64-bit parameters exact', () => {
    const req = decodeModelInferRequest({
      model_name: 'classifier',
      model_version: '',
      id: '',
      parameters: { big: { int64_param: '9007199254740993', parameter_choice: 'int64_param' } },
      inputs: [
        { name: 'A', datatype: 'INT32', shape: ['1'], parameters: {}, contents: { int_contents: [5] } as never },
      ],
      outputs: [{ name: 'P', parameters: { classification: { int64_param: '2', parameter_choice: 'int64_param' } } }],
      raw_input_contents: [],
    });
    const queued = encodeQueuedInfer(req);
    const body = Buffer.from((queued.input as { base64: string }).base64, 'base64');
    const json = body.subarray(0, Number(queued.headers[BINARY_HEADER])).toString();
    expect(json).toContain('"big":9007199254740993');
    expect(asWorkerSees(queued).outputs).toEqual([{ name: 'P', parameters: { binary_data: true, classification: 2 } }]);
  });

  it('refuses a body over maxBodyBytes (PAYLOAD_TOO_LARGE) and takes one exactly at it', () => {
    const req = decodeModelInferRequest({
      model_name: 'simple',
      model_version: '',
      id: '',
      parameters: {},
      inputs: [{ name: 'A', datatype: 'INT32', shape: ['1', '256'], parameters: {}, contents: null }],
      outputs: [],
      raw_input_contents: [raw(new Array(256).fill(0))],
    });
    const size = Buffer.from((encodeQueuedInfer(req).input as { base64: string }).base64, 'base64').byteLength;
    expect(() => encodeQueuedInfer(req, {}, { maxBodyBytes: size })).not.toThrow();
    let refused: unknown;
    try {
      encodeQueuedInfer(req, {}, { maxBodyBytes: size - 1 });
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect((refused as Error).message).toBe(
      `request body exceeds ${size - 1} bytes: the inputs encode to ${size} bytes for the function`,
    );
  });
});

describe('decodeInferResult', () => {
  it('turns a binary-extension answer into raw_output_contents', () => {
    const out = encodeHttpInferResponse(
      {
        model_name: 'simple',
        model_version: '1',
        id: 'r',
        outputs: [{ name: 'O', datatype: 'INT32', shape: [2], data: Int32Array.from([3, 4]) }],
      },
      { binaryDataOutput: true },
    );
    const res = decodeInferResult({
      status: 200,
      contentType: out.contentType,
      body: out.body,
      headers: { [BINARY_HEADER]: String(out.inferenceHeaderContentLength) },
    });
    expect(res).toMatchObject({ model_name: 'simple', model_version: '1', id: 'r' });
    expect(res.outputs).toEqual([{ name: 'O', datatype: 'INT32', shape: [2], parameters: {} }]);
    expect(Buffer.from(res.raw_output_contents[0]!)).toEqual(raw([3, 4]));
  });

  const failure = (status: number, detail: string): InvocationResult => ({
    status,
    contentType: PROBLEM_CONTENT_TYPE,
    body: Buffer.from(JSON.stringify(problem(status, detail, { source: 'inference-service' }))),
  });
  const codeOf = (result: InvocationResult) => {
    try {
      decodeInferResult(result);
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return [(err as AppError).code, (err as AppError).message];
    }
    throw new Error('expected a failure');
  };

  it.each([
    [400, 'INVALID_ARGUMENT'],
    [404, 'NOT_FOUND'],
    [429, 'RESOURCE_EXHAUSTED'],
    [500, 'INTERNAL'],
    [503, 'UNAVAILABLE'],
    [504, 'DEADLINE_EXCEEDED'],
    [418, 'INVALID_ARGUMENT'],
    [599, 'INTERNAL'],
  ])('a problem+json %i → %s with its detail', (status, code) => {
    expect(codeOf(failure(status, `because ${status}`))).toEqual([code, `because ${status}`]);
  });

  it('KServe\'s {"error"} and bodies that are not JSON', () => {
    const kserve = { status: 400, contentType: 'application/json', body: Buffer.from('{"error":"bad input"}') };
    expect(codeOf(kserve)).toEqual(['INVALID_ARGUMENT', 'bad input']);
    const text = { status: 502, contentType: 'text/html', body: Buffer.from('<html>') };
    expect(codeOf(text)).toEqual(['UNAVAILABLE', 'the function answered HTTP 502']);
  });

  it('a success that is not a KServe response → INTERNAL', () => {
    const result = { status: 200, contentType: 'application/json', body: Buffer.from('{"hello":1}') };
    expect(codeOf(result)[0]).toBe('INTERNAL');
  });
});

describe('checkModel', () => {
  const fv = {
    id: 'f',
    versionId: 'v',
    model: { name: 'simple', version: '1', platform: 'onnxruntime_onnx', inputs: [], outputs: [] },
  } as unknown as FunctionVersion;
  it('accepts the function model by name, version or neither', () => {
    expect(() => checkModel(fv, '', undefined)).not.toThrow();
    expect(() => checkModel(fv, 'simple', '1')).not.toThrow();
    expect(() => checkModel(fv, 'simple', '')).not.toThrow();
  });
  it('refuses another model or version with Triton texts', () => {
    expect(() => checkModel(fv, 'resnet', undefined)).toThrow("Request for unknown model: 'resnet' is not found");
    expect(() => checkModel(fv, 'simple', '2')).toThrow(
      "Request for unknown model: 'simple' version 2 is not at ready state",
    );
  });
});
