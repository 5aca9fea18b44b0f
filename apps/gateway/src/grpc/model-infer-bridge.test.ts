import { FunctionVersion } from '@nvcf/control-store';
import { decodeModelInferRequest } from '@nvcf/kserve-grpc';
import {
  AppError,
  decodeInferRequestParts,
  errorCodeOfHttpStatus,
  PROBLEM_CONTENT_TYPE,
  problem,
} from '@nvcf/protocol';
import { type InvocationFailure, type InvocationResult, MODEL_INFER_RESPONSE_TYPE } from '@nvcf/queue';
import { describe, expect, it } from 'vitest';
import { checkModel, decodeInferResult, encodeQueuedInfer } from './model-infer-bridge.ts';

const raw = (values: number[]) => Buffer.from(Int32Array.from(values).buffer);

/** What the worker receives: the job as its queue entry carries it (JSON), its tensors' bytes beside it. */
function asWorkerSees(queued: ReturnType<typeof encodeQueuedInfer>) {
  const input = JSON.parse(JSON.stringify(queued.input)) as typeof queued.input;
  expect(input.kind).toBe('kserve');
  expect(input.binaryBytes).toBe(queued.binary.byteLength);
  return decodeInferRequestParts(input.header, queued.binary);
}

describe('encodeQueuedInfer', () => {
  it('carries every input as raw bytes beside a JSON part, nothing base64', () => {
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
    const queued = encodeQueuedInfer(req);
    expect(queued.binary).toEqual(Buffer.concat([raw([7, -8]), Buffer.from([2, 0, 0, 0, 0x68, 0x69])]));
    const seen = asWorkerSees(queued);
    expect(seen.id).toBe('x1');
    expect(seen.parameters).toBeUndefined();
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
    // The job's JSON as the producer writes it.
    expect(JSON.stringify(queued.input)).toContain('"big":9007199254740993');
    expect(asWorkerSees(queued).outputs).toEqual([{ name: 'P', parameters: { classification: 2 } }]);
    expect([...(asWorkerSees(queued).inputs[0]!.data as Int32Array)]).toEqual([5]);
  });

  it('refuses a request over maxBodyBytes (PAYLOAD_TOO_LARGE) and takes one exactly at it', () => {
    const req = decodeModelInferRequest({
      model_name: 'simple',
      model_version: '',
      id: '',
      parameters: {},
      inputs: [{ name: 'A', datatype: 'INT32', shape: ['1', '256'], parameters: {}, contents: null }],
      outputs: [],
      raw_input_contents: [raw(new Array(256).fill(0))],
    });
    const queued = encodeQueuedInfer(req);
    const size = queued.binary.byteLength + JSON.stringify(queued.input.header).length;
    expect(() => encodeQueuedInfer(req, { maxBodyBytes: size })).not.toThrow();
    let refused: unknown;
    try {
      encodeQueuedInfer(req, { maxBodyBytes: size - 1 });
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
  it("sends the worker's rendered ModelInferResponse as it is", () => {
    const body = Buffer.from([0x0a, 0x06, 0x73, 0x69, 0x6d, 0x70, 0x6c, 0x65]);
    expect(decodeInferResult({ ok: true, status: 200, contentType: MODEL_INFER_RESPONSE_TYPE, body })).toBe(body);
  });

  // A container server's failure, coded by its HTTP status as the worker's container edge codes it.
  const failure = (status: number, detail: string): InvocationFailure => ({
    ok: false,
    code: errorCodeOfHttpStatus(status),
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

  it('the code the worker gave a failure wins over its HTTP status', () => {
    // 422 alone reads as INVALID_ARGUMENT; the worker said UNPROCESSABLE (gRPC FAILED_PRECONDITION).
    expect(codeOf({ ...failure(422, 'conflict'), code: 'UNPROCESSABLE' })).toEqual(['UNPROCESSABLE', 'conflict']);
    expect(codeOf({ ...failure(500, 'gone'), code: 'UNAVAILABLE' })[0]).toBe('UNAVAILABLE');
  });

  it('KServe\'s {"error"} and bodies that are not JSON', () => {
    const kserve: InvocationResult = {
      ok: false,
      code: 'INVALID_ARGUMENT',
      status: 400,
      contentType: 'application/json',
      body: Buffer.from('{"error":"bad input"}'),
    };
    expect(codeOf(kserve)).toEqual(['INVALID_ARGUMENT', 'bad input']);
    const text: InvocationResult = {
      ok: false,
      code: 'UNAVAILABLE',
      status: 502,
      contentType: 'text/html',
      body: Buffer.from('<html>'),
    };
    expect(codeOf(text)).toEqual(['UNAVAILABLE', 'the function answered HTTP 502']);
  });

  it('a success that is not a rendered ModelInferResponse → INTERNAL', () => {
    const result: InvocationResult = {
      ok: true,
      status: 200,
      contentType: 'application/json',
      body: Buffer.from('{"hello":1}'),
    };
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
  it('refuses a container function: its server is reached over HTTP only', () => {
    const container = FunctionVersion.parse({
      id: crypto.randomUUID(),
      versionId: crypto.randomUUID(),
      name: 'echo',
      ncaId: 'n',
      createdAt: new Date().toISOString(),
      inferenceUrl: '/echo',
      deployment: null,
      container: { image: 'img', health: { uri: '/health', timeoutMs: 1000, expectedStatusCode: 200 } },
    });
    const refused = (() => {
      try {
        checkModel(container, '', undefined);
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'UNIMPLEMENTED', message: expect.stringMatching(/container function/) });
  });
});
