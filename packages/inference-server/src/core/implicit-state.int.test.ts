import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildModel, OnnxElemType, writeModelVersion } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KserveFixture, startKserveFixture } from '../http/kserve-test-fixture.ts';

/**
 * An accumulator whose running sum is implicit state (Triton's implicit state management): OUTPUT = INPUT +
 * INPUT_STATE, and OUTPUT_STATE = OUTPUT is what the next request of the sequence gets as INPUT_STATE.
 */
async function writeAccumulator(dir: string): Promise<void> {
  const spec = (name: string) => ({ name, elemType: OnnxElemType.INT32, shape: ['batch', 1] });
  const model = buildModel({
    graphName: 'accumulator',
    inputs: [spec('INPUT'), spec('INPUT_STATE')],
    outputs: [spec('OUTPUT'), spec('OUTPUT_STATE')],
    nodes: [
      { opType: 'Add', inputs: ['INPUT', 'INPUT_STATE'], outputs: ['OUTPUT'], name: 'add' },
      { opType: 'Identity', inputs: ['OUTPUT'], outputs: ['OUTPUT_STATE'], name: 'keep' },
    ],
  });
  const modelDir = await writeModelVersion(dir, 'accumulator', model);
  await writeFile(
    join(modelDir, 'config.pbtxt'),
    `max_batch_size: 4
sequence_batching {
  state [ { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_INT32 dims: [ 1 ] } ]
}
input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 2 kind: KIND_CPU } ]
`,
  );
}

let fx: KserveFixture;
beforeAll(async () => {
  fx = await startKserveFixture({}, writeAccumulator);
});
afterAll(async () => {
  await fx?.close();
});

const send = async (id: number, value: number, flags: { start?: boolean; end?: boolean } = {}) => {
  const res = await fetch(`${fx.url}/v2/models/accumulator/infer`, {
    method: 'POST',
    body: JSON.stringify({
      parameters: {
        sequence_id: id,
        ...(flags.start ? { sequence_start: true } : {}),
        ...(flags.end ? { sequence_end: true } : {}),
      },
      inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [1, 1], data: [value] }],
    }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const { outputs } = (await res.json()) as { outputs: { name: string; data: number[] }[] };
  // State outputs are the batcher's: never answered.
  expect(outputs.map((o) => o.name)).toEqual(['OUTPUT']);
  return outputs[0]?.data[0];
};

describe('implicit state (sequence_batching.state)', () => {
  it("carries the model's state from one request of a sequence to the next, zeros on START", async () => {
    expect(await send(1, 5, { start: true })).toBe(5);
    expect(await send(1, 3)).toBe(8);
    expect(await send(1, -1)).toBe(7);
    expect(await send(1, 10, { end: true })).toBe(17);
    // A new START begins from zeros again.
    expect(await send(1, 2, { start: true })).toBe(2);
  });

  it('keeps one state per sequence, interleaved', async () => {
    expect(await send(10, 1, { start: true })).toBe(1);
    expect(await send(20, 100, { start: true })).toBe(100);
    expect(await send(10, 1)).toBe(2);
    expect(await send(20, 100)).toBe(200);
    expect(await send(10, 1, { end: true })).toBe(3);
    expect(await send(20, 100, { end: true })).toBe(300);
  });

  it('runs the requests of one sequence one at a time, even when they arrive together and two instances are free', async () => {
    expect(await send(30, 1, { start: true })).toBe(1);
    // Each request adds 1 to the state the previous one left: in whatever order they are admitted, the answers are
    // 2..9, each once (two at a time on the same state would answer some value twice).
    const answers = await Promise.all(Array.from({ length: 8 }, () => send(30, 1)));
    expect([...answers].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await send(30, 0, { end: true })).toBe(9);
  });

  it("lists only the request's own tensors in metadata", async () => {
    const meta = (await (await fetch(`${fx.url}/v2/models/accumulator`)).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      inputs: [{ name: 'INPUT', datatype: 'INT32', shape: [-1, 1] }],
      outputs: [{ name: 'OUTPUT', datatype: 'INT32', shape: [-1, 1] }],
    });
  });
});
