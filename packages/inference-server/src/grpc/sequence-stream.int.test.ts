import { writeTritonExampleModels } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchangeStream, type GrpcFixture, int32Bytes, int32sOf, startGrpcFixture } from './grpc-test-fixture.ts';

let fx: GrpcFixture;
beforeAll(async () => {
  fx = await startGrpcFixture('sequence', (dir) => writeTritonExampleModels(dir));
});
afterAll(async () => {
  await fx?.close();
});

interface StreamResponse {
  error_message: string;
  infer_response: { id: string; raw_output_contents: Buffer[] } | null;
}

const values = [11, 7, 5, 3, 2, 0, 1];
const int64 = (n: number) => ({ int64_param: String(n), parameter_choice: 'int64_param' });
const str = (s: string) => ({ string_param: s, parameter_choice: 'string_param' });
const bool = (b: boolean) => ({ bool_param: b, parameter_choice: 'bool_param' });

/** A sequence's requests as simple_grpc_sequence_stream_infer_client.py writes them: id "<seq>_<n>", flags as params. */
function sequence(model: string, id: number | string, inputs: number[]) {
  return inputs.map((value, i) => ({
    model_name: model,
    id: `${id}_${i + 1}`,
    parameters: {
      sequence_id: typeof id === 'number' ? int64(id) : str(id),
      ...(i === 0 ? { sequence_start: bool(true) } : {}),
      ...(i === inputs.length - 1 ? { sequence_end: bool(true) } : {}),
    },
    inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1] }],
    outputs: [{ name: 'OUTPUT' }],
    raw_input_contents: [int32Bytes([value])],
  }));
}

const exchange = (requests: object[]) => exchangeStream<StreamResponse>(fx, requests);

describe('sequences over ModelStreamInfer (simple_grpc_sequence_stream_infer_client.py)', () => {
  it('runs three interleaved-in-time sequences on one stream, echoing request ids, in request order', async () => {
    const a = sequence('simple_dyna_sequence', 1000, [0, ...values]);
    const b = sequence('simple_dyna_sequence', 1001, [100, ...values.map((v) => -v)]);
    const s = sequence('simple_sequence', 'a1b2c3', [20, ...values.map((v) => -v)]);
    const responses = await exchange([...a, ...b, ...s]);
    expect(responses.map((r) => r.error_message)).toEqual(new Array(24).fill(''));
    const by = (prefix: string) =>
      responses
        .filter((r) => r.infer_response?.id.startsWith(`${prefix}_`))
        .map((r) => int32sOf(r.infer_response?.raw_output_contents[0] ?? Buffer.alloc(0))[0]);
    expect(by('1000')).toEqual([1, 11, 7, 5, 3, 2, 0, 1001]);
    expect(by('1001')).toEqual([101, -11, -7, -5, -3, -2, 0, 1000]);
    expect(by('a1b2c3')).toEqual([21, -11, -7, -5, -3, -2, 0, -1]);
  });

  it('answers a request without START in-band, and the stream goes on', async () => {
    const [first] = sequence('simple_sequence', 4242, [1, 2]).slice(1);
    const responses = await exchange([first ?? {}, ...sequence('simple_sequence', 4243, [5])]);
    expect(responses[0]?.error_message).toBe(
      "inference request for sequence 4242 to model 'simple_sequence' must specify the START flag on the first request of the sequence",
    );
    expect(int32sOf(responses[1]?.infer_response?.raw_output_contents[0] ?? Buffer.alloc(0))).toEqual([6]);
  });
});
