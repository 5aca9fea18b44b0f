import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildModel, type ModelVersionEntry, OnnxElemType, writeModelVersion } from '@nvcf/models';
import { AppError, type Tensor } from '@nvcf/protocol';
import { createLogger } from '@nvcf/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import { SessionCache } from '../runtime/session-cache.ts';
import { createInferenceCore, type StartableCore } from './inference-core.ts';

/**
 * Real sessions whose answers wait at a gate the test controls: the one way to keep the single instance busy
 * while requests queue, whatever the machine's speed. The runs themselves are ONNX Runtime's, started at once
 * (so the session counts them in flight); only their results are held back.
 */
class GatedSessions extends SessionCache {
  readonly runs: { model: string; shape: number[] }[] = [];
  #gate: Promise<void> = Promise.resolve();
  #entered: (() => void) | undefined;

  override async load(entry: ModelVersionEntry): Promise<LoadedModel> {
    const model = await super.load(entry);
    const run: LoadedModel['run'] = async (inputs, outputNames) => {
      this.runs.push({ model: model.name, shape: inputs[0]?.shape ?? [] });
      const result = model.run(inputs, outputNames);
      const gate = this.#gate;
      this.#entered?.();
      this.#entered = undefined;
      await gate;
      return result;
    };
    return { ...model, run };
  }

  /** Closes the gate: `entered` resolves when a run reaches it, `open()` lets every run through. */
  hold(): { entered: Promise<void>; open: () => void } {
    let open = () => {};
    this.#gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const entered = new Promise<void>((resolve) => {
      this.#entered = resolve;
    });
    return {
      entered,
      open: () => {
        this.#gate = Promise.resolve();
        open();
      },
    };
  }
}

const ONE_INSTANCE = 'instance_group [ { count: 1 kind: KIND_CPU } ]';
const config = (name: string, dims: string, batching: string) => `name: "${name}"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_FP32 dims: [ ${dims} ] } ]
output [ { name: "Y" data_type: TYPE_FP32 dims: [ ${dims} ] } ]
${ONE_INSTANCE}
dynamic_batching { ${batching} }
`;

/** Y = X + X over [batch, 4]. */
const doubleModel = () =>
  buildModel({
    graphName: 'double',
    inputs: [{ name: 'X', elemType: OnnxElemType.FLOAT, shape: ['batch', 4] }],
    outputs: [{ name: 'Y', elemType: OnnxElemType.FLOAT, shape: ['batch', 4] }],
    nodes: [{ opType: 'Add', inputs: ['X', 'X'], outputs: ['Y'] }],
  });
/** Y = X over [batch, n]: requests of different widths cannot share a batch. */
const raggedModel = () =>
  buildModel({
    graphName: 'ragged',
    inputs: [{ name: 'X', elemType: OnnxElemType.FLOAT, shape: ['batch', 'n'] }],
    outputs: [{ name: 'Y', elemType: OnnxElemType.FLOAT, shape: ['batch', 'n'] }],
    nodes: [{ opType: 'Identity', inputs: ['X'], outputs: ['Y'] }],
  });
/** Y = Xᵀ, [n, batch]: its first dimension is dynamic but not the batch (a model bug that batching exposes). */
const transposeModel = () =>
  buildModel({
    graphName: 'transpose',
    inputs: [{ name: 'X', elemType: OnnxElemType.FLOAT, shape: ['batch', 'n'] }],
    outputs: [{ name: 'Y', elemType: OnnxElemType.FLOAT, shape: ['n', 'batch'] }],
    nodes: [{ opType: 'Transpose', inputs: ['X'], outputs: ['Y'] }],
  });

const DELAY = 'max_queue_delay_microseconds: 60000000';
const MODELS: [string, Uint8Array, string][] = [
  ['double', doubleModel(), config('double', '4', `preferred_batch_size: [ 6 ] ${DELAY}`)],
  ['ragged', raggedModel(), config('ragged', '-1', `preferred_batch_size: [ 4 ] ${DELAY}`)],
  ['transpose', transposeModel(), config('transpose', '-1', `preferred_batch_size: [ 2 ] ${DELAY}`)],
  [
    'policy',
    doubleModel(),
    config(
      'policy',
      '4',
      'default_queue_policy { timeout_action: REJECT allow_timeout_override: true max_queue_size: 2 }',
    ),
  ],
];

let dir: string;
let sessions: GatedSessions;
let core: StartableCore;

const rowsFrom = (rows: number, from: number, width: number): Tensor => ({
  name: 'X',
  datatype: 'FP32',
  shape: [rows, width],
  data: Float32Array.from({ length: rows * width }, (_, i) => from + i),
});
const valuesOf = (outputs: Tensor[]) => Array.from(outputs[0]?.data as Float32Array);
const stats = (model: string) => {
  const s = core.statistics(model, '1')[0];
  if (!s) throw new Error(`no statistics for ${model}`);
  return s;
};
const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
  }
};
const settle = <T>(p: Promise<T>) => {
  const s: { done: boolean; error?: unknown } = { done: false };
  p.then(
    () => Object.assign(s, { done: true }),
    (error) => Object.assign(s, { done: true, error }),
  );
  return s;
};

/** Occupies the model's single instance with an 8-row request held at the gate. */
async function occupy(model: string, width: number) {
  const gate = sessions.hold();
  const running = core.infer({ modelName: model, inputs: [rowsFrom(8, 0, width)] });
  await gate.entered;
  return { running, open: gate.open };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nvcf-batching-'));
  for (const [name, model, pbtxt] of MODELS) {
    const modelDir = await writeModelVersion(dir, name, model);
    await writeFile(join(modelDir, 'config.pbtxt'), pbtxt);
  }
  const logger = createLogger({ name: 'test', level: 'silent' });
  sessions = new GatedSessions({ executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, logger });
  core = createInferenceCore({ repository: dir, sessions, logger });
  await core.start();
});
afterAll(async () => {
  await core?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('dynamic batching through the core', () => {
  it('runs requests that queue behind a busy instance as one execution, each answered with its own rows', async () => {
    expect(core.isReady()).toBe(true);
    const before = stats('double');
    const runsBefore = sessions.runs.length;
    const busy = await occupy('double', 4);
    const queued = Array.from({ length: 6 }, (_, i) =>
      core.infer({ modelName: 'double', id: `r${i}`, inputs: [rowsFrom(1, i * 10, 4)] }),
    );
    busy.open();
    expect(valuesOf((await busy.running).outputs)).toHaveLength(32);
    const answers = await Promise.all(queued);
    answers.forEach((a, i) => {
      expect(a.id).toBe(`r${i}`);
      expect(a.outputs[0]?.shape).toEqual([1, 4]);
      expect(valuesOf(a.outputs)).toEqual([0, 2, 4, 6].map((d) => 2 * i * 10 + d));
    });
    expect(sessions.runs.slice(runsBefore).map((r) => r.shape)).toEqual([
      [8, 4],
      [6, 4],
    ]);
    const after = stats('double');
    expect(after.inference_count - before.inference_count).toBe(14);
    expect(after.execution_count - before.execution_count).toBe(2);
    expect(after.inference_stats.success.count - before.inference_stats.success.count).toBe(7);
    expect(after.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([
      [6, 1],
      [8, 1],
    ]);
  });

  it('does not merge requests whose non-batch dimensions differ', async () => {
    const runsBefore = sessions.runs.length;
    const busy = await occupy('ragged', 2);
    // Interleaved widths 3 and 5: each width forms its own batch of the preferred 4 rows.
    const queued = Array.from({ length: 8 }, (_, i) =>
      core.infer({ modelName: 'ragged', inputs: [rowsFrom(1, i * 100, i % 2 === 0 ? 3 : 5)] }),
    );
    busy.open();
    await busy.running;
    const answers = await Promise.all(queued);
    answers.forEach((a, i) => {
      const width = i % 2 === 0 ? 3 : 5;
      expect(a.outputs[0]?.shape).toEqual([1, width]);
      expect(valuesOf(a.outputs)).toEqual(Array.from({ length: width }, (_, k) => i * 100 + k));
    });
    expect(sessions.runs.slice(runsBefore).map((r) => r.shape)).toEqual([
      [8, 2],
      [4, 3],
      [4, 5],
    ]);
  });

  it('fails only the requests of a failed batch', async () => {
    const busy = await occupy('transpose', 2);
    // Width 3 over 2 rows: the batch's output is [3, 2], which no row split can give back.
    const pair = [
      settle(core.infer({ modelName: 'transpose', inputs: [rowsFrom(1, 1, 3)] })),
      settle(core.infer({ modelName: 'transpose', inputs: [rowsFrom(1, 4, 3)] })),
    ];
    // Another width: its own batch, alone, where the model's answer is the whole request's as it is.
    const alone = core.infer({ modelName: 'transpose', inputs: [rowsFrom(2, 1, 5)] });
    busy.open();
    expect((await busy.running).outputs[0]?.shape).toEqual([2, 8]);
    const own = await alone;
    expect(own.outputs[0]?.shape).toEqual([5, 2]);
    expect(valuesOf(own.outputs)).toEqual([1, 6, 2, 7, 3, 8, 4, 9, 5, 10]);
    await expect.poll(() => pair.every((p) => p.done)).toBe(true);
    for (const p of pair) {
      expect(p.error).toBeInstanceOf(AppError);
      expect((p.error as AppError).code).toBe('INTERNAL');
      expect((p.error as AppError).message).toMatch(/not batch-major over the batch's 2 rows/);
    }
    expect(stats('transpose').inference_stats.fail.count).toBe(2);
  });

  it('applies the queue policy: request timeouts (Triton `timeout`) and the maximum queue size', async () => {
    const busy = await occupy('policy', 4);
    const timed = core.infer({ modelName: 'policy', inputs: [rowsFrom(1, 0, 4)], parameters: { timeout: 1000 } });
    const kept = core.infer({ modelName: 'policy', inputs: [rowsFrom(1, 10, 4)] });
    // The instance stays busy until the gate opens: the timeout expires in the queue whatever the speed.
    expect(await codeOf(timed)).toBe('UNAVAILABLE: Request timeout expired');
    const second = core.infer({ modelName: 'policy', inputs: [rowsFrom(1, 20, 4)] });
    expect(await codeOf(core.infer({ modelName: 'policy', inputs: [rowsFrom(1, 30, 4)] }))).toBe(
      'UNAVAILABLE: Exceeds maximum queue size',
    );
    busy.open();
    await busy.running;
    expect(valuesOf((await kept).outputs)).toEqual([20, 22, 24, 26]);
    expect(valuesOf((await second).outputs)).toEqual([40, 42, 44, 46]);
    const policyStats = core.servedVersions().find((s) => s.name === 'policy');
    expect(policyStats?.failures().REJECTED).toBe(2);
    expect(stats('policy').batch_stats.map((b) => b.batch_size)).toEqual([2, 8]);
  });

  it('rejects what is queued when the model is unloaded', async () => {
    const busy = await occupy('double', 4);
    const queued = codeOf(core.infer({ modelName: 'double', inputs: [rowsFrom(1, 0, 4)] }));
    await core.unloadModel('double');
    expect(await queued).toBe("UNAVAILABLE: model 'double' version 1 is unloaded");
    // The batch already running finishes.
    busy.open();
    expect(valuesOf((await busy.running).outputs)).toHaveLength(32);
  });
});
