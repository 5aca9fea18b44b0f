import { status } from '@grpc/grpc-js';
import { writeGenerativeModel, writeTritonExampleModels } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bytesElements,
  exchangeStream,
  type GrpcFixture,
  int32Bytes,
  parseBytesElements,
  startGrpcFixture,
} from './grpc-test-fixture.ts';

let fx: GrpcFixture;
beforeAll(async () => {
  fx = await startGrpcFixture('decoupled', async (dir) => {
    await writeTritonExampleModels(dir);
    await writeGenerativeModel(dir);
  });
});
afterAll(async () => {
  await fx?.close();
});

interface Param {
  bool_param?: boolean;
}
interface StreamResponse {
  error_message: string;
  infer_response: {
    id: string;
    outputs: { name: string }[];
    raw_output_contents: Buffer[];
    parameters: Record<string, Param>;
  } | null;
}

const uint32Bytes = (values: number[]) => Buffer.from(Uint32Array.from(values).buffer);
const bool = (b: boolean) => ({ bool_param: b, parameter_choice: 'bool_param' });

/** repeat_int32's request as simple_grpc_custom_repeat.py builds it: IN values, DELAY per value, WAIT. */
const repeatRequest = (id: string, values: number[], emptyFinal?: boolean) => ({
  model_name: 'repeat_int32',
  id,
  ...(emptyFinal === undefined ? {} : { parameters: { triton_enable_empty_final_response: bool(emptyFinal) } }),
  inputs: [
    { name: 'IN', datatype: 'INT32', shape: [values.length] },
    { name: 'DELAY', datatype: 'UINT32', shape: [values.length] },
    { name: 'WAIT', datatype: 'UINT32', shape: [1] },
  ],
  raw_input_contents: [int32Bytes(values), uint32Bytes(values.map(() => 0)), uint32Bytes([0])],
});

const exchange = (requests: object[]) => exchangeStream<StreamResponse>(fx, requests);

const final = (r: StreamResponse) => r.infer_response?.parameters.triton_final_response?.bool_param;
const out = (r: StreamResponse) => {
  const i = r.infer_response?.outputs.findIndex((o) => o.name === 'OUT') ?? -1;
  return r.infer_response?.raw_output_contents[i]?.readInt32LE(0);
};
const idx = (r: StreamResponse) => {
  const i = r.infer_response?.outputs.findIndex((o) => o.name === 'IDX') ?? -1;
  return r.infer_response?.raw_output_contents[i]?.readUInt32LE(0);
};

describe('decoupled models over ModelStreamInfer (repeat_int32)', () => {
  it('answers one request with one response per element, then an empty final response when asked for', async () => {
    const responses = await exchange([repeatRequest('r1', [4, 2, 0, 7], true)]);
    expect(responses.map((r) => r.error_message)).toEqual(['', '', '', '', '']);
    expect(responses.slice(0, 4).map(out)).toEqual([4, 2, 0, 7]);
    expect(responses.slice(0, 4).map(idx)).toEqual([0, 1, 2, 3]);
    expect(responses.map(final)).toEqual([false, false, false, false, true]);
    expect(responses.map((r) => r.infer_response?.id)).toEqual(['r1', 'r1', 'r1', 'r1', 'r1']);
    expect(responses[4]?.infer_response?.outputs).toEqual([]);
  });

  it('sends no flags-only final without the opt-in, and nothing but the final for an empty IN', async () => {
    const plain = await exchange([repeatRequest('r2', [9])]);
    expect(plain.map(out)).toEqual([9]);
    expect(plain.map(final)).toEqual([false]);
    const empty = await exchange([repeatRequest('r3', [], true)]);
    expect(empty.map(final)).toEqual([true]);
  });

  it("marks a non-decoupled model's one response final, and refuses a bad opt-in value in-band", async () => {
    const simple = {
      model_name: 'simple',
      id: 's1',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
      ],
      raw_input_contents: [int32Bytes(new Array(16).fill(1)), int32Bytes(new Array(16).fill(2))],
    };
    const bad = {
      ...repeatRequest('r4', [1]),
      parameters: { triton_enable_empty_final_response: { int64_param: '1', parameter_choice: 'int64_param' } },
    };
    const responses = await exchange([simple, bad]);
    expect(final(responses[0] as StreamResponse)).toBe(true);
    expect(responses[1]?.error_message).toBe(
      "invalid value type for 'triton_enable_empty_final_response' parameter, expected bool_param.",
    );
  });

  it("refuses unary ModelInfer on a decoupled model with Triton's words", async () => {
    const err = await fx.fail('ModelInfer', repeatRequest('u1', [1]));
    expect(err.code).toBe(status.UNIMPLEMENTED);
    expect(err.details).toBe("ModelInfer RPC doesn't support models with decoupled transaction policy");
  });
});

describe('text generation is a decoupled model too (generative, the greedy_decoder backend)', () => {
  it('streams one text_output per token over ModelStreamInfer, then the empty final response', async () => {
    const request = {
      model_name: 'generative',
      id: 'g1',
      parameters: { triton_enable_empty_final_response: bool(true) },
      inputs: [
        { name: 'text_input', datatype: 'BYTES', shape: [1] },
        { name: 'max_tokens', datatype: 'INT32', shape: [1] },
      ],
      raw_input_contents: [bytesElements(['H']), int32Bytes([5])],
    };
    const responses = await exchange([request]);
    expect(responses.map((r) => r.error_message)).toEqual(['', '', '', '', '', '']);
    const text = responses.slice(0, 5).map((r) => {
      const raw = r.infer_response?.raw_output_contents[0] ?? Buffer.alloc(0);
      return parseBytesElements(raw)
        .map((b) => b.toString('latin1'))
        .join('');
    });
    expect(text).toEqual(['i', ',', 'N', 'V', 'C']);
    expect(responses.map(final)).toEqual([false, false, false, false, false, true]);
  });

  it('refuses a token budget out of range in-band, and the unary ModelInfer as Triton does', async () => {
    const request = (maxTokens: number) => ({
      model_name: 'generative',
      inputs: [
        { name: 'text_input', datatype: 'BYTES', shape: [1] },
        { name: 'max_tokens', datatype: 'INT32', shape: [1] },
      ],
      raw_input_contents: [bytesElements(['H']), int32Bytes([maxTokens])],
    });
    const [refused] = await exchange([request(0)]);
    expect(refused?.error_message).toMatch(/max_tokens must be between 1 and 4096, got 0/);
    const err = await fx.fail('ModelInfer', request(3));
    expect(err.code).toBe(status.UNIMPLEMENTED);
  });
});
