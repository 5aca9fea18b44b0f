import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { callUnary, loadKserveClients } from '@nvcf/kserve-grpc';
import { IDENTITY_DATATYPES, type IdentityDatatype, identityModelName } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bytesElements,
  type GrpcFixture,
  int32Bytes,
  int32sOf,
  parseBytesElements,
  startGrpcFixture,
} from './grpc-test-fixture.ts';

let fx: GrpcFixture;
beforeAll(async () => {
  fx = await startGrpcFixture('infer');
});
afterAll(async () => {
  await fx?.close();
});

interface InferResponse {
  model_name: string;
  model_version: string;
  id: string;
  parameters: Record<string, unknown>;
  outputs: { name: string; datatype: string; shape: string[]; contents: unknown }[];
  raw_output_contents: Buffer[];
}

const range16 = Array.from({ length: 16 }, (_, i) => i);
const ones16 = Array(16).fill(1);
const simpleInput = (name: string) => ({ name, datatype: 'INT32', shape: [1, 16] });
const rawSimple = (extra: object = {}) => ({
  model_name: 'simple',
  inputs: [simpleInput('INPUT0'), simpleInput('INPUT1')],
  raw_input_contents: [int32Bytes(range16), int32Bytes(ones16)],
  ...extra,
});
const utf8 = (s: string) => Buffer.from(s);

/** Six elements per datatype, with the values most likely to be mangled (as identity.int.test.ts). */
const RAW_SAMPLES: Record<IdentityDatatype, ArrayBufferView | Buffer[]> = {
  BOOL: new Uint8Array([0, 1, 1, 0, 0, 1]),
  UINT8: new Uint8Array([0, 1, 127, 128, 254, 255]),
  UINT16: new Uint16Array([0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff]),
  UINT32: new Uint32Array([0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]),
  UINT64: new BigUint64Array([0n, 1n, 2n ** 53n + 1n, 2n ** 63n, 2n ** 64n - 2n, 2n ** 64n - 1n]),
  INT8: new Int8Array([-128, -1, 0, 1, 126, 127]),
  INT16: new Int16Array([-32768, -1, 0, 1, 32766, 32767]),
  INT32: new Int32Array([-(2 ** 31), -1, 0, 1, 2 ** 31 - 2, 2 ** 31 - 1]),
  INT64: new BigInt64Array([-(2n ** 63n), -1n, 0n, 2n ** 53n + 1n, 2n ** 63n - 2n, 2n ** 63n - 1n]),
  FP16: new Uint16Array([0x3c00, 0x8000, 0x0001, 0x7bff, 0x7c00, 0x7e01]),
  FP32: new Float32Array([0, -0, 1.5, -3.25e-38, Number.POSITIVE_INFINITY, Number.NaN]),
  FP64: new Float64Array([0, -0, Math.PI, Number.MIN_VALUE, Number.MAX_VALUE, Number.NaN]),
  BYTES: ['', 'hello', 'héllo wörld', '日本語', '\uFEFFbom', '🙂'].map(utf8).concat([]),
};

const rawOf = (sample: ArrayBufferView | Buffer[]): Buffer =>
  Array.isArray(sample) ? bytesElements(sample) : Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength);

/** Typed `contents` per datatype (grpc_explicit_*_content_client.py); FP16 has no typed field. */
const TYPED: Partial<Record<IdentityDatatype, [string, unknown[], ArrayBufferView | Buffer[]]>> = {
  BOOL: ['bool_contents', [false, true, true, false, false, true], new Uint8Array([0, 1, 1, 0, 0, 1])],
  UINT8: ['uint_contents', [0, 1, 127, 128, 254, 255], new Uint8Array([0, 1, 127, 128, 254, 255])],
  UINT16: ['uint_contents', [0, 1, 0x7fff, 0x8000, 0xfffe, 0xffff], RAW_SAMPLES.UINT16],
  UINT32: ['uint_contents', [0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff], RAW_SAMPLES.UINT32],
  UINT64: [
    'uint64_contents',
    ['0', '1', '9007199254740993', '9223372036854775808', '18446744073709551614', '18446744073709551615'],
    RAW_SAMPLES.UINT64,
  ],
  INT8: ['int_contents', [-128, -1, 0, 1, 126, 127], RAW_SAMPLES.INT8],
  INT16: ['int_contents', [-32768, -1, 0, 1, 32766, 32767], RAW_SAMPLES.INT16],
  INT32: ['int_contents', [-(2 ** 31), -1, 0, 1, 2 ** 31 - 2, 2 ** 31 - 1], RAW_SAMPLES.INT32],
  INT64: [
    'int64_contents',
    ['-9223372036854775808', '-1', '0', '9007199254740993', '9223372036854775806', '9223372036854775807'],
    RAW_SAMPLES.INT64,
  ],
  FP32: [
    'fp32_contents',
    [0, -0, 1.5, -3.25e-38, Number.POSITIVE_INFINITY, 1],
    new Float32Array([0, -0, 1.5, -3.25e-38, Number.POSITIVE_INFINITY, 1]),
  ],
  FP64: [
    'fp64_contents',
    [0, -0, Math.PI, Number.MIN_VALUE, Number.MAX_VALUE, -1],
    new Float64Array([0, -0, Math.PI, Number.MIN_VALUE, Number.MAX_VALUE, -1]),
  ],
  BYTES: ['bytes_contents', RAW_SAMPLES.BYTES as Buffer[], RAW_SAMPLES.BYTES],
};

describe('ModelInfer on simple', () => {
  it('adds and subtracts raw INT32 inputs and answers with raw_output_contents only', async () => {
    const res = await fx.call<InferResponse>('ModelInfer', rawSimple({ id: 'req-1' }), { metadata: { test: '1' } });
    expect(res).toMatchObject({ model_name: 'simple', model_version: '1', id: 'req-1' });
    expect(res.outputs.map((o) => [o.name, o.datatype, o.shape])).toEqual([
      ['OUTPUT0', 'INT32', ['1', '16']],
      ['OUTPUT1', 'INT32', ['1', '16']],
    ]);
    expect(res.outputs.every((o) => o.contents === null)).toBe(true);
    expect(int32sOf(res.raw_output_contents[0]!)).toEqual(range16.map((v) => v + 1));
    expect(int32sOf(res.raw_output_contents[1]!)).toEqual(range16.map((v) => v - 1));
  });

  it('accepts typed int_contents (grpc_explicit_int_content_client.py)', async () => {
    const res = await fx.call<InferResponse>('ModelInfer', {
      model_name: 'simple',
      model_version: '1',
      inputs: [
        { ...simpleInput('INPUT0'), contents: { int_contents: range16 } },
        { ...simpleInput('INPUT1'), contents: { int_contents: ones16 } },
      ],
    });
    expect(int32sOf(res.raw_output_contents[0]!)).toEqual(range16.map((v) => v + 1));
    expect(int32sOf(res.raw_output_contents[1]!)).toEqual(range16.map((v) => v - 1));
  });

  it('returns only the requested outputs, in the requested order, and ignores binary_data', async () => {
    const res = await fx.call<InferResponse>(
      'ModelInfer',
      rawSimple({ outputs: [{ name: 'OUTPUT1', parameters: { binary_data: { bool_param: true } } }] }),
    );
    expect(res.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(res.raw_output_contents).toHaveLength(1);
    expect(int32sOf(res.raw_output_contents[0]!)).toEqual(range16.map((v) => v - 1));
  });

  it('batches rows: a [3,16] request returns [3,16] outputs', async () => {
    const rows = Array.from({ length: 48 }, (_, i) => i);
    const res = await fx.call<InferResponse>('ModelInfer', {
      model_name: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [3, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [3, 16] },
      ],
      raw_input_contents: [int32Bytes(rows), int32Bytes(rows)],
    });
    expect(res.outputs[0]?.shape).toEqual(['3', '16']);
    expect(int32sOf(res.raw_output_contents[0]!)).toEqual(rows.map((v) => 2 * v));
  });

  it('accepts request parameters of every kind (sequence_id, priority, timeout, custom)', async () => {
    const res = await fx.call<InferResponse>(
      'ModelInfer',
      rawSimple({
        parameters: {
          sequence_id: { int64_param: '0' },
          priority: { uint64_param: '0' },
          timeout: { int64_param: 1_000_000 },
          custom_flag: { bool_param: true },
          custom_text: { string_param: 'x' },
          custom_ratio: { double_param: 0.5 },
        },
      }),
    );
    expect(int32sOf(res.raw_output_contents[0]!)).toEqual(range16.map((v) => v + 1));
  });
});

describe('ModelInfer datatype round trips on identity_<dtype>', () => {
  it.each(IDENTITY_DATATYPES)('%s via raw_input_contents comes back byte for byte', async (dt) => {
    const raw = rawOf(RAW_SAMPLES[dt]);
    const res = await fx.call<InferResponse>('ModelInfer', {
      model_name: identityModelName(dt),
      inputs: [{ name: 'INPUT0', datatype: dt, shape: [2, 3] }],
      raw_input_contents: [raw],
    });
    expect(res.outputs).toMatchObject([{ name: 'OUTPUT0', datatype: dt, shape: ['2', '3'] }]);
    expect(Buffer.from(res.raw_output_contents[0]!).equals(raw)).toBe(true);
  });

  it.each(Object.keys(TYPED) as IdentityDatatype[])('%s via typed contents comes back raw', async (dt) => {
    const [field, values, expected] = TYPED[dt]!;
    const res = await fx.call<InferResponse>('ModelInfer', {
      model_name: identityModelName(dt),
      inputs: [{ name: 'INPUT0', datatype: dt, shape: [2, 3], contents: { [field]: values } }],
    });
    expect(res.outputs[0]).toMatchObject({ datatype: dt, shape: ['2', '3'], contents: null });
    expect(Buffer.from(res.raw_output_contents[0]!).equals(rawOf(expected))).toBe(true);
  });

  it('keeps INT64 values beyond 2^53 exact in int64_contents', async () => {
    const big = ['9007199254740993', '-9007199254740995'];
    const res = await fx.call<InferResponse>('ModelInfer', {
      model_name: 'identity_int64',
      inputs: [{ name: 'INPUT0', datatype: 'INT64', shape: [1, 2], contents: { int64_contents: big } }],
    });
    const raw = res.raw_output_contents[0]!;
    const out = new BigInt64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
    expect([...out].map(String)).toEqual(big);
  });

  it('refuses BYTES elements ONNX Runtime string tensors cannot hold (not UTF-8) as INVALID_ARGUMENT', async () => {
    const err = await fx.fail('ModelInfer', {
      model_name: 'identity_bytes',
      inputs: [
        {
          name: 'INPUT0',
          datatype: 'BYTES',
          shape: [1, 2],
          contents: { bytes_contents: [Buffer.from([0xff, 0xfe]), Buffer.alloc(0)] },
        },
      ],
    });
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain('UTF-8');
  });

  it('moves messages far above gRPC’s 4 MiB default both ways (2M FP32 = 8 MB)', async () => {
    const n = 2_000_000;
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = i * 0.5;
    const raw = Buffer.from(data.buffer);
    const res = await fx.call<InferResponse>('ModelInfer', {
      model_name: 'identity_fp32',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n] }],
      raw_input_contents: [raw],
    });
    expect(res.outputs[0]?.shape).toEqual(['1', String(n)]);
    expect(res.raw_output_contents[0]!.byteLength).toBe(4 * n);
    expect(Buffer.from(res.raw_output_contents[0]!).equals(raw)).toBe(true);
  });
});

describe('ModelInfer classification extension', () => {
  it('returns the top N classes as BYTES "<value>:<index>:<label>" for a classification int64_param', async () => {
    const input = new Float32Array(784).map((_, i) => (i % 7) / 7);
    const plain = await fx.call<InferResponse>('ModelInfer', {
      model_name: 'classifier',
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784] }],
      raw_input_contents: [Buffer.from(input.buffer)],
    });
    const raw = plain.raw_output_contents[0]!;
    const probs = [...new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))];
    const best = probs.indexOf(Math.max(...probs));

    const res = await fx.call<InferResponse>('ModelInfer', {
      model_name: 'classifier',
      inputs: [{ name: 'INPUT', datatype: 'FP32', shape: [1, 784] }],
      outputs: [{ name: 'PROBABILITIES', parameters: { classification: { int64_param: 3 } } }],
      raw_input_contents: [Buffer.from(input.buffer)],
    });
    expect(res.outputs[0]).toMatchObject({ name: 'PROBABILITIES', datatype: 'BYTES', shape: ['1', '3'] });
    const classes = parseBytesElements(res.raw_output_contents[0]!).map(String);
    expect(classes).toHaveLength(3);
    expect(classes[0]).toBe(`${probs[best]!.toFixed(6)}:${best}:digit-${best}`);
  });
});

describe('ModelInfer errors (the server keeps serving)', () => {
  const expectStillServing = async () => {
    const res = await fx.call<InferResponse>('ModelInfer', rawSimple());
    expect(int32sOf(res.raw_output_contents[0]!)).toEqual(range16.map((v) => v + 1));
  };

  it('unknown model → INVALID_ARGUMENT "Request for unknown model"', async () => {
    const err = await fx.fail('ModelInfer', { ...rawSimple(), model_name: 'nope' });
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toBe("Request for unknown model: 'nope' is not found");
  });

  it('unknown version → UNAVAILABLE', async () => {
    const err = await fx.fail('ModelInfer', rawSimple({ model_version: '7' }));
    expect(err.code).toBe(status.UNAVAILABLE);
    expect(err.details).toContain("Request for unknown model: 'simple' version 7 is not at ready state");
  });

  const bytesInput = { name: 'INPUT0', datatype: 'BYTES', shape: [1, 1] };
  const typedSimple = (input0: object) => ({
    model_name: 'simple',
    inputs: [
      { ...simpleInput('INPUT0'), contents: input0 },
      { ...simpleInput('INPUT1'), contents: { int_contents: ones16 } },
    ],
  });
  const one = (model: string, datatype: string, contents: object) => ({
    model_name: model,
    inputs: [{ name: 'INPUT0', datatype, shape: [1, 1], contents }],
  });

  it.each([
    [
      'raw contents of the wrong byte size',
      rawSimple({ raw_input_contents: [int32Bytes(range16).subarray(4), int32Bytes(ones16)] }),
      "input 'INPUT0': shape [1,16] of INT32 needs 64 bytes of binary data, got 60",
    ],
    [
      'raw_input_contents count ≠ inputs count',
      rawSimple({ raw_input_contents: [int32Bytes(range16)] }),
      "expected 2 inputs but got 1 raw_input_contents in request for model 'simple'",
    ],
    [
      'raw and typed contents mixed',
      {
        ...rawSimple(),
        inputs: [{ ...simpleInput('INPUT0'), contents: { int_contents: range16 } }, simpleInput('INPUT1')],
      },
      "contents field must not be specified when using raw_input_contents for 'INPUT0'",
    ],
    [
      'typed contents with the wrong element count',
      typedSimple({ int_contents: range16.slice(1) }),
      "input 'INPUT0': expected 16 elements in 'int_contents' for shape [1,16], got 15",
    ],
    [
      'typed contents in the wrong field',
      typedSimple({ fp32_contents: range16 }),
      "INT32 contents belong in 'int_contents', got 'fp32_contents'",
    ],
    [
      'a BYTES length prefix running past the end',
      { model_name: 'identity_bytes', inputs: [bytesInput], raw_input_contents: [Buffer.from([9, 0, 0, 0, 0x61])] },
      'length prefix says 9 bytes but only 1 remain',
    ],
    [
      'a BYTES length prefix cut short',
      { model_name: 'identity_bytes', inputs: [bytesInput], raw_input_contents: [Buffer.from([1, 0])] },
      'BYTES',
    ],
    ['FP16 in typed contents', one('identity_fp16', 'FP16', {}), 'send it in raw_input_contents'],
    ['an INT8 value out of range', one('identity_int8', 'INT8', { int_contents: [300] }), 'out of range for INT8'],
    ['an unknown datatype', one('identity_fp32', 'FP8', {}), "unknown datatype 'FP8'"],
    [
      'a negative dimension',
      rawSimple({ inputs: [{ ...simpleInput('INPUT0'), shape: [-1, 16] }, simpleInput('INPUT1')] }),
      'invalid shape [-1,16]',
    ],
    [
      'a reserved triton_ parameter',
      rawSimple({ parameters: { triton_enable: { bool_param: true } } }),
      "parameter keys starting with 'triton_' are reserved",
    ],
    [
      'a classification parameter that is not a positive int64',
      rawSimple({ outputs: [{ name: 'OUTPUT0', parameters: { classification: { string_param: 'x' } } }] }),
      "'classification' must be a positive int64_param",
    ],
  ])('%s → INVALID_ARGUMENT', async (_, request, expected) => {
    const err = await fx.fail('ModelInfer', request);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toContain(expected);
    await expectStillServing();
  });

  it('calls cancelled or past their deadline mid-flight do not disturb the server', async () => {
    const n = 2_000_000;
    const big = {
      model_name: 'identity_fp32',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, n] }],
      raw_input_contents: [Buffer.alloc(4 * n)],
    };
    const { service } = loadKserveClients().GRPCInferenceService;
    const cancelled = await new Promise<ServiceError | null>((resolve) => {
      const call = callUnary(fx.inference, service, 'ModelInfer', big, new Metadata(), {}, (err) => resolve(err));
      setImmediate(() => call.cancel());
    });
    expect(cancelled?.code).toBe(status.CANCELLED);
    const late = await fx.fail('ModelInfer', big, { deadlineMs: 1 });
    expect(late.code).toBe(status.DEADLINE_EXCEEDED);
    await expectStillServing();
  });
});
