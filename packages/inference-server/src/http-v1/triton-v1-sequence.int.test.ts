import { writeTritonExampleModels } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, startKserveFixture } from '../http/kserve-test-fixture.ts';
import { int32sOf, nvStatus, postV1Infer } from './v1-test-helpers.ts';

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture({}, (dir) => writeTritonExampleModels(dir));
});
afterAll(async () => {
  await fx?.close();
});

const header = (correlationId: number, flags: number) =>
  `batch_size: 1 correlation_id: ${correlationId} flags: ${flags} input { name: "INPUT" } output { name: "OUTPUT" }`;
const value = (v: number) => new Uint8Array(Int32Array.of(v).buffer);

describe('v1 sequence flags on the sequence batcher', () => {
  it('correlation_id and the START/END flags drive simple_dyna_sequence as the v2 parameters do', async () => {
    const step = async (v: number, flags: number) =>
      int32sOf((await postV1Infer(fx.url, 'simple_dyna_sequence', header(1000, flags), value(v))).raw[0]!)[0];
    expect(await step(0, 1)).toBe(1);
    expect(await step(11, 0)).toBe(11);
    expect(await step(1, 2)).toBe(1001);
  });

  it("a request of a sequence that was not started is refused with Triton's words", async () => {
    const res = await fetch(`${fx.url}/api/infer/simple_sequence`, {
      method: 'POST',
      body: value(1),
      headers: { 'NV-InferRequest': header(31337, 0) },
    });
    expect(res.status).toBe(400);
    expect(nvStatus(res).msg).toContain('must specify the START flag on the first request of the sequence');
  });
});
