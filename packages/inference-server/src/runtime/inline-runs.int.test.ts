import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildModel, float32RawData, OnnxElemType } from '@nvcf/models';
import type { Tensor } from '@nvcf/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInlineRuns, type InlineRuns, inputElements } from './inline-runs.ts';
import type { InstanceThreadData } from './thread-messages.ts';

const WIDTH = 256;

const X = { name: 'X', elemType: OnnxElemType.FLOAT, shape: ['batch', WIDTH] };
const Y = { name: 'Y', elemType: OnnxElemType.FLOAT, shape: ['batch', WIDTH] };
const W = {
  name: 'W',
  elemType: OnnxElemType.FLOAT,
  dims: [WIDTH, WIDTH],
  rawData: float32RawData(new Float32Array(WIDTH * WIDTH).fill(0.5)),
};

/** Y = X · W with W all 0.5: each output is half its row's sum. 256×256 weights: a run does real work. */
function matMulModel(): Uint8Array {
  return buildModel({
    graphName: 'matmul',
    inputs: [X],
    outputs: [Y],
    initializers: [W],
    nodes: [{ opType: 'MatMul', inputs: ['X', 'W'], outputs: ['Y'] }],
  });
}

/** The same MatMul inside an `If`: control flow, whose time can depend on what the inputs hold. */
function ifModel(): Uint8Array {
  const branch = (name: string) => ({
    name,
    nodes: [{ opType: 'MatMul', inputs: ['X', 'W'], outputs: [`${name}_y`] }],
    outputs: [{ ...Y, name: `${name}_y` }],
  });
  return buildModel({
    graphName: 'if',
    inputs: [X, { name: 'COND', elemType: OnnxElemType.BOOL, shape: [] }],
    outputs: [Y],
    initializers: [W],
    nodes: [
      {
        opType: 'If',
        inputs: ['COND'],
        outputs: ['Y'],
        subgraphs: { then_branch: branch('then'), else_branch: branch('else') },
      },
    ],
  });
}

const rows = (batch: number): Tensor[] => [
  { name: 'X', datatype: 'FP32', shape: [batch, WIDTH], data: new Float32Array(batch * WIDTH).fill(1) },
];

interface Line {
  level: string;
  msg: string | undefined;
}

let dir: string;
let lines: Line[];
const logger = {
  info: (_obj: object, msg?: string) => lines.push({ level: 'info', msg }),
  warn: (_obj: object, msg?: string) => lines.push({ level: 'warn', msg }),
};
const meta = { name: 'matmul', version: '1' };
const data = (file: string, ortProvider = 'cpu'): InstanceThreadData => ({
  modelName: 'matmul',
  modelPath: join(dir, file),
  ortProvider,
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
});
const opened: InlineRuns[] = [];
function inlineRuns(file: string, maxMicros: number, provider = 'cpu'): InlineRuns {
  const runs = createInlineRuns(data(file, provider), maxMicros, logger, meta);
  opened.push(runs);
  return runs;
}
/** `count` thread runs of `elements` elements reported as taking `ms`; the last one's opening, if it started one. */
function observe(runs: InlineRuns, count: number, elements: number, ms: number): Promise<void> | undefined {
  let opening: Promise<void> | undefined;
  for (let i = 0; i < count; i++) opening = runs.observe(elements, ms) ?? opening;
  return opening;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'inline-runs-'));
  await writeFile(join(dir, 'matmul.onnx'), matMulModel());
  await writeFile(join(dir, 'if.onnx'), ifModel());
});
afterAll(async () => {
  await Promise.all(opened.map((r) => r.release()));
  await rm(dir, { recursive: true, force: true });
});

describe('inline runs', () => {
  it('counts the elements of every input', () => {
    expect(
      inputElements([
        ...rows(3),
        { name: 'S', datatype: 'BYTES', shape: [2], data: [new Uint8Array(1), new Uint8Array(5)] },
      ]),
    ).toBe(3 * WIDTH + 2);
  });

  it('after sixteen fast thread runs, runs of at most their size execute inline with the same answers', async () => {
    lines = [];
    const runs = inlineRuns('matmul.onnx', 250);
    expect(observe(runs, 15, 2 * WIDTH, 0.05)).toBeUndefined();
    expect(runs.covers(WIDTH)).toBe(false);
    await observe(runs, 1, 2 * WIDTH, 0.05);
    expect(runs.covers(2 * WIDTH)).toBe(true);
    expect(runs.covers(WIDTH)).toBe(true);
    expect(runs.covers(2 * WIDTH + 1)).toBe(false);
    expect(lines.map((l) => l.msg)).toEqual([
      'small runs of this model take less than a thread hand-off: they run on the event loop',
    ]);
    const [y] = await runs.run(rows(2), ['Y']);
    expect(y?.shape).toEqual([2, WIDTH]);
    expect(Array.from(y?.data as Float32Array)).toEqual(new Array(2 * WIDTH).fill(WIDTH / 2));
    // A fast thread run of a larger request widens what goes inline.
    runs.observe(4 * WIDTH, 0.05);
    expect(runs.covers(4 * WIDTH)).toBe(true);
  });

  it('judges by the median of the last sixteen thread runs, and none of them may take over 8× the limit', async () => {
    const runs = inlineRuns('matmul.onnx', 250);
    // One run over 8× the limit rules the model out while it is among the last sixteen…
    expect(runs.observe(WIDTH, 2.5)).toBeUndefined();
    // …and runs over the limit (a thread idle a while finds cold caches) do not, while most are under it.
    expect(observe(runs, 5, WIDTH, 0.6)).toBeUndefined();
    expect(observe(runs, 10, WIDTH, 0.05)).toBeUndefined();
    expect(runs.covers(WIDTH)).toBe(false);
    await observe(runs, 1, WIDTH, 0.05);
    expect(runs.covers(WIDTH)).toBe(true);
  });

  it('keeps a model on threads while the median of its last sixteen runs is over the limit', () => {
    const runs = inlineRuns('matmul.onnx', 250);
    for (let i = 0; i < 64; i++) expect(runs.observe(WIDTH, i % 2 === 0 ? 0.05 : 0.3)).toBeUndefined();
    expect(runs.covers(WIDTH)).toBe(false);
  });

  it('keeps every run on threads with a limit of 0, on a provider other than the CPU, or for control flow', async () => {
    for (const runs of [inlineRuns('matmul.onnx', 0), inlineRuns('matmul.onnx', 250, 'cuda')]) {
      expect(observe(runs, 32, WIDTH, 0.01)).toBeUndefined();
      expect(runs.covers(1)).toBe(false);
    }
    const withIf = inlineRuns('if.onnx', 250);
    await observe(withIf, 16, WIDTH, 0.01);
    expect(withIf.covers(1)).toBe(false);
    expect(observe(withIf, 32, WIDTH, 0.01)).toBeUndefined();
  });

  it('sends the model back to its threads when its inline runs keep taking more than 8× the limit', async () => {
    lines = [];
    // A 1 µs limit that the thread runs are reported under: no CPU runs a 64×256×256 MatMul in 8 µs, so every
    // inline run after the warm-up is a miss.
    const runs = inlineRuns('matmul.onnx', 1);
    await observe(runs, 16, 64 * WIDTH, 0);
    expect(runs.covers(64 * WIDTH)).toBe(true);
    let inline = 0;
    while (runs.covers(64 * WIDTH) && inline < 100) {
      const [y] = await runs.run(rows(64), ['Y']);
      expect(y?.data[0]).toBe(WIDTH / 2);
      inline += 1;
    }
    expect(inline).toBe(16); // 8 warm-up runs, then 8 misses
    expect(lines.at(-1)).toEqual({
      level: 'warn',
      msg: 'runs of this model on the event loop took too long: they go back to its threads',
    });
    expect(observe(runs, 32, WIDTH, 0)).toBeUndefined();
  });

  it('goes back to threads once released, after the runs already started have answered', async () => {
    const runs = inlineRuns('matmul.onnx', 250);
    await observe(runs, 16, WIDTH, 0.05);
    expect(runs.covers(WIDTH)).toBe(true);
    // Each started run's native work waits for a later turn of the event loop: the release must not free the
    // session under them.
    const started = Array.from({ length: 5 }, () => runs.run(rows(1), ['Y']));
    const released = runs.release();
    expect(runs.covers(WIDTH)).toBe(false);
    for (const answer of await Promise.all(started)) expect(answer[0]?.data[0]).toBe(WIDTH / 2);
    await released;
  });
});
