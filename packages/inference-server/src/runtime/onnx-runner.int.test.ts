import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildModel,
  float32RawData,
  generateExampleRepository,
  OnnxElemType,
  scanModelRepository,
  writeModelVersion,
} from '@nvcf/models';
import type { Tensor } from '@nvcf/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LoadedModel } from './onnx-runner.ts';
import { SessionCache } from './session-cache.ts';

/** INPUT0 is int4 (opset 21): ORT loads it, but no API datatype can carry it. X → Y is an ordinary FP32 path. */
function buildInt4Model(): Uint8Array {
  return buildModel({
    graphName: 'int4',
    opset: 21,
    irVersion: 10,
    inputs: [
      { name: 'INPUT0', elemType: OnnxElemType.INT4, shape: ['batch', 2] },
      { name: 'X', elemType: OnnxElemType.FLOAT, shape: [2] },
    ],
    outputs: [
      { name: 'OUTPUT0', elemType: OnnxElemType.FLOAT, shape: ['batch', 2] },
      { name: 'Y', elemType: OnnxElemType.FLOAT, shape: [2] },
    ],
    initializers: [
      { name: 'scale', elemType: OnnxElemType.FLOAT, dims: [], rawData: float32RawData(new Float32Array([0.5])) },
    ],
    nodes: [
      { opType: 'DequantizeLinear', inputs: ['INPUT0', 'scale'], outputs: ['OUTPUT0'] },
      { opType: 'Identity', inputs: ['X'], outputs: ['Y'] },
    ],
  });
}

let dir: string;
let cache: SessionCache;
let simple: LoadedModel;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-runner-'));
  await generateExampleRepository(dir);
  await writeModelVersion(dir, 'int4', buildInt4Model());
  cache = new SessionCache({
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    logger: { info() {}, warn() {} },
  });
  const entry = (await scanModelRepository(dir)).find((e) => e.name === 'simple');
  simple = await cache.load(entry!);
});

afterAll(async () => {
  await cache?.close();
  await rm(dir, { recursive: true, force: true });
});

const int32 = (name: string, shape: number[], length = shape.reduce((a, b) => a * b, 1)): Tensor => ({
  name,
  datatype: 'INT32',
  shape,
  data: new Int32Array(length),
});
const ok = () => [int32('INPUT0', [1, 16]), int32('INPUT1', [1, 16])];

describe('LoadedModel.run validation', () => {
  it.each<[string, () => Promise<unknown>, string]>([
    [
      'an unknown input',
      () => simple.run([...ok(), int32('INPUT9', [1, 16])]),
      "unexpected inference input 'INPUT9' for model 'simple'",
    ],
    [
      'a missing input',
      () => simple.run([int32('INPUT0', [1, 16])]),
      "expected 2 inputs but got 1 inputs for model 'simple'",
    ],
    [
      'a datatype mismatch',
      () =>
        simple.run([
          { name: 'INPUT0', datatype: 'FP32', shape: [1, 16], data: new Float32Array(16) },
          int32('INPUT1', [1, 16]),
        ]),
      "inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'",
    ],
    [
      'a fixed dimension mismatch',
      () => simple.run([int32('INPUT0', [1, 15]), int32('INPUT1', [1, 16])]),
      "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,15]",
    ],
    [
      'a rank mismatch',
      () => simple.run([int32('INPUT0', [16]), int32('INPUT1', [1, 16])]),
      "unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [16]",
    ],
    [
      'an unknown output',
      () => simple.run(ok(), ['OUTPUT0', 'OUTPUT7']),
      "unexpected inference output 'OUTPUT7' for model 'simple'",
    ],
    [
      'data shorter than the shape',
      () => simple.run([int32('INPUT0', [1, 16], 15), int32('INPUT1', [1, 16])]),
      "unexpected element count for input 'INPUT0' for model 'simple'. Shape [1,16] needs 16, got 15",
    ],
    [
      'an input given twice',
      () => simple.run([...ok(), int32('INPUT0', [1, 16])]),
      "inference input 'INPUT0' is given more than once",
    ],
  ])('rejects %s with INVALID_ARGUMENT', async (_, run, message) => {
    await expect(run()).rejects.toMatchObject({
      name: 'AppError',
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(message),
    });
  });

  it('names what is missing', async () => {
    await expect(simple.run([int32('INPUT1', [1, 16])])).rejects.toThrow(
      "Got input(s) ['INPUT1'], but missing required input(s) ['INPUT0']",
    );
  });

  it('turns an error ORT raises about the inputs into INVALID_ARGUMENT with ORT’s message', async () => {
    // Both shapes fit [-1,16], but a batch of 2 cannot broadcast against a batch of 3.
    const run = simple.run([int32('INPUT0', [2, 16]), int32('INPUT1', [3, 16])]);
    await expect(run).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('broadcast'),
    });
  });
});

describe('a model with a tensor type we cannot carry', () => {
  it('loads, lists the tensor as unsupported, and refuses to run', async () => {
    const entry = (await scanModelRepository(dir)).find((e) => e.name === 'int4');
    const model = await cache.load(entry!);
    expect(model.inputs).toEqual([{ name: 'X', datatype: 'FP32', shape: [2] }]);
    expect(model.unsupported).toEqual([{ name: 'INPUT0', kind: 'input', ortType: 'int4' }]);
    const run = model.run([{ name: 'X', datatype: 'FP32', shape: [2], data: new Float32Array(2) }], ['Y']);
    await expect(run).rejects.toMatchObject({ code: 'UNIMPLEMENTED', message: expect.stringContaining("'INPUT0'") });
  });
});

describe('after unload', () => {
  it('refuses new runs with UNAVAILABLE', async () => {
    const entry = (await scanModelRepository(dir)).find((e) => e.name === 'simple')!;
    const other = new SessionCache({
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      logger: { info() {}, warn() {} },
    });
    const model = await other.load(entry);
    const inFlight = model.run(ok());
    expect(await other.unload('simple', '1')).toBe(true);
    await expect(inFlight).resolves.toHaveLength(2);
    await expect(model.run(ok())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await other.close();
  });
});

describe('runs too small for a thread hand-off', () => {
  it('move to the event loop once sixteen in a row ran under the limit, and answer the same there', async () => {
    const entry = (await scanModelRepository(dir)).find((e) => e.name === 'simple')!;
    const said: string[] = [];
    const inlineCache = new SessionCache({
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      // A limit no run of `simple` comes near, whatever the machine: the test is about where runs go, not speed.
      inlineMaxMicros: 1_000_000,
      logger: { info: (_o, msg) => said.push(msg ?? ''), warn: (_o, msg) => said.push(msg ?? '') },
    });
    try {
      const model = await inlineCache.load(entry);
      const inputs = (): Tensor[] => [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Int32Array.from({ length: 16 }, (_, i) => i) },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16).fill(1) },
      ];
      const inlineLine = 'small runs of this model take less than a thread hand-off: they run on the event loop';
      const answersRight = async () => {
        const [sum, difference] = await model.run(inputs(), ['OUTPUT0', 'OUTPUT1']);
        expect(Array.from(sum?.data as Int32Array)).toEqual(Array.from({ length: 16 }, (_, k) => k + 1));
        expect(Array.from(difference?.data as Int32Array)).toEqual(Array.from({ length: 16 }, (_, k) => k - 1));
      };
      for (let i = 0; i < 15; i++) await answersRight();
      expect(said).not.toContain(inlineLine);
      // The 16th thread run qualifies the model; its inline session opens while runs go on (on threads meanwhile).
      await answersRight();
      await vi.waitFor(() => expect(said).toContain(inlineLine), { timeout: 30_000, interval: 10 });
      for (let i = 0; i < 20; i++) await answersRight();
      expect(said.filter((m) => m === inlineLine)).toHaveLength(1);
      // A request too large for what was measured goes to a thread and is answered all the same.
      const rows = 4;
      const big: Tensor[] = [
        int32('INPUT0', [rows, 16]),
        { name: 'INPUT1', datatype: 'INT32', shape: [rows, 16], data: new Int32Array(rows * 16).fill(2) },
      ];
      const [sum] = await model.run(big, ['OUTPUT0']);
      expect(Array.from(sum?.data as Int32Array)).toEqual(new Array(rows * 16).fill(2));
    } finally {
      await inlineCache.close();
    }
  });
});
