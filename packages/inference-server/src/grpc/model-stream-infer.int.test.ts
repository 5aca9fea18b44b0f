import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchangeStream, type GrpcFixture, int32Bytes, int32sOf, startGrpcFixture } from './grpc-test-fixture.ts';

let fx: GrpcFixture;
beforeAll(async () => {
  fx = await startGrpcFixture('stream');
});
afterAll(async () => {
  await fx?.close();
});

interface StreamResponse {
  error_message: string;
  infer_response: { id: string; model_name: string; raw_output_contents: Buffer[] } | null;
}

const simpleRequest = (id: string, offset: number) => ({
  model_name: 'simple',
  id,
  inputs: [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16] },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16] },
  ],
  raw_input_contents: [int32Bytes(Array.from({ length: 16 }, (_, i) => i + offset)), int32Bytes(Array(16).fill(1))],
});

const exchange = (requests: object[]) => exchangeStream<StreamResponse>(fx, requests);

describe('ModelStreamInfer', () => {
  it('answers every request in order, reporting a bad one in-band while the stream goes on', async () => {
    const responses = await exchange([
      simpleRequest('a', 0),
      simpleRequest('b', 100),
      { ...simpleRequest('bad', 0), model_name: 'nope' },
      { ...simpleRequest('short', 0), raw_input_contents: [int32Bytes([1])] },
      simpleRequest('c', 1000),
    ]);
    expect(responses).toHaveLength(5);
    expect(responses.map((r) => r.infer_response?.id ?? r.error_message)).toEqual([
      'a',
      'b',
      "Request for unknown model: 'nope' is not found",
      expect.stringContaining('raw_input_contents'),
      'c',
    ]);
    expect(responses[0]?.error_message).toBe('');
    expect(int32sOf(responses[1]!.infer_response!.raw_output_contents[0]!)[0]).toBe(101);
    expect(int32sOf(responses[4]!.infer_response!.raw_output_contents[1]!)[15]).toBe(1014);
  });

  it('keeps order across many concurrent requests on one stream', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
    const responses = await exchange(ids.map((id, i) => simpleRequest(id, i)));
    expect(responses.map((r) => r.infer_response?.id)).toEqual(ids);
    expect(responses.map((r) => int32sOf(r.infer_response!.raw_output_contents[0]!)[0])).toEqual(
      ids.map((_, i) => i + 1),
    );
  });

  it('ends cleanly when the client half-closes without sending anything', async () => {
    expect(await exchange([])).toEqual([]);
  });

  it('survives a client that cancels mid-stream', async () => {
    const stream = fx.stream();
    stream.on('error', () => {});
    for (let i = 0; i < 5; i++) stream.write(simpleRequest(`x${i}`, i));
    stream.cancel();
    const responses = await exchange([simpleRequest('after', 0)]);
    expect(responses.map((r) => r.infer_response?.id)).toEqual(['after']);
  });
});
